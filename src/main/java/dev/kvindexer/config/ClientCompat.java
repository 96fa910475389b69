package dev.kvindexer.config;

/**
 * Where a node departs from the newest reference clients on purpose, for deployments that need an older or a more
 * lenient behaviour; both off by default.
 *
 * @param tenantFallback the Dynamo API's older group rule: {@code tenant_id} names the group when
 *                       {@code routing_group} is absent, and {@code GET /workers} echoes it
 * @param loraIds        C++ Conductor engine registrations accept a {@code BlockStored} whose {@code lora_id} is set
 *                       when its {@code lora_name} is the registration's (the reference refuses every such event, so
 *                       LoRA contexts never gain GPU blocks from current vLLM)
 */
public record ClientCompat(boolean tenantFallback, boolean loraIds) {
    public static final ClientCompat NEWEST = new ClientCompat(false, false);
}

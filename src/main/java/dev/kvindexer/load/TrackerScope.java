package dev.kvindexer.load;

/** What a slot tracker is kept per (SPEC §9.1): a model and a tenant; worker ids are scoped by it. */
public record TrackerScope(String modelName, String tenantId) {
    public static final String DEFAULT_TENANT = "default";

    public TrackerScope {
        if (tenantId == null) {
            tenantId = DEFAULT_TENANT;
        }
    }
}

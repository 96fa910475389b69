package dev.kvindexer.event;

/**
 * One standardized KV event (docs/protocol/events.md#standardized-kv-events, Mooncake RFC #1527) after validation: its
 * stream, its {@code event_id}, the
 * owner it applies to, and the index operation it becomes. Ordering is per stream: the event_ids of one stream are
 * consecutive; the partition drops one at or below the stream's last and counts the ones missing before it.
 *
 * @param stream   the stream identity (model, block size, salt, LoRA, tenant, backend, medium, dp_rank) as one key
 * @param eventId  the event's {@code event_id} (unsigned)
 * @param workerId the registered instance its {@code backend_id} names
 * @param dpRank   the event's {@code dp_rank}
 */
public record StandardEvent(String stream, long eventId, long workerId, int dpRank, KvEvent event) {}

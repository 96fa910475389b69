package dev.kvindexer.partition;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.index.OwnerMatches;
import dev.kvindexer.index.TieredMatch;
import java.util.List;

/** The messages a partition actor accepts and answers, all immutable and sent with local codecs. */
public final class PartitionMessages {
    private PartitionMessages() {
    }

    /**
     * A listener generation of a stream starts (registration or resume); batches of other generations are
     * dropped. {@code replayEndpoint} is the engine's ROUTER, or null; {@code defaultLora} the LoRA of its events
     * that name none, or null; {@code sharedStore} marks a Mooncake Store publisher (SPEC §5.3).
     */
    public record OpenStream(long workerId, int dpRank, long generation, String replayEndpoint, String defaultLora,
                             boolean sharedStore) {
        public OpenStream(long workerId, int dpRank, long generation, String replayEndpoint) {
            this(workerId, dpRank, generation, replayEndpoint, null, false);
        }
    }

    /** A batch fetched from the engine by replay {@code replayId}, in seq order. */
    public record ReplayedBatch(long workerId, int registeredRank, long generation, long replayId, EventBatch batch) {
    }

    /** Replay {@code replayId} has ended; every batch it fetched was sent before this message. */
    public record ReplayFinished(long workerId, int registeredRank, long generation, long replayId) {
    }

    /** A decoded batch from the stream (workerId, registeredRank) of the given listener generation. */
    public record ApplyBatch(long workerId, int registeredRank, long generation, EventBatch batch) {
    }

    /** Unregistration of one rank ({@code dpRank >= 0}) or of the whole worker ({@code dpRank < 0}). */
    public record RemoveStreams(long workerId, int dpRank, boolean lastOfWorker) {
        public boolean wholeWorker() {
            return dpRank < 0 || lastOfWorker;
        }
    }

    /**
     * A prompt's block hashes: local hashes, already seeded and chunked with the partition's block size, or with
     * {@code sequenceHashes} the rolling sequence hashes of Mooncake's {@code /query_by_hash}.
     */
    public record Query(long[] hashes, boolean sequenceHashes) {
        public Query(long[] localHashes) {
            this(localHashes, false);
        }
    }

    /**
     * {@code sharedReach} is {cpu, disk} in blocks that the partition's Mooncake Stores alone hold of the prompt: the
     * reach of a registered rank with no blocks of its own.
     */
    public record QueryReply(int blockSize, OwnerMatches owners, int[] sharedReach) {
        /** The matches as records, built by the caller rather than on the partition's event loop. */
        public List<OwnerMatch> matches() {
            return owners.toList();
        }
    }

    /** A prompt's local hashes, to be matched tier by tier (Dynamo's /query_tiered_by_hash). */
    public record TieredQuery(long[] localHashes) {
    }

    public record TieredReply(int blockSize, TieredMatch match) {
    }

    /** One event of a peer's dump, for the owner (worker, dp_rank) that held it. */
    public record RecoveredEvent(long workerId, int dpRank, KvEvent event) {
    }

    /** The last applied seq of stream (worker, registered dp_rank) in a peer's snapshot. */
    public record StreamWatermark(long workerId, int dpRank, long seq) {
    }

    /**
     * A peer's dump of this partition, events applied in order. {@code exact} when the peer sent the watermark of
     * every stream (a kvindexer peer): streams then resume from those watermarks. Otherwise (a Dynamo peer) the
     * partition counts as bootstrapped and each stream takes its first live batch as is.
     */
    public record Recovered(List<RecoveredEvent> events, List<StreamWatermark> watermarks, boolean exact) {
        public Recovered {
            events = List.copyOf(events);
            watermarks = List.copyOf(watermarks);
        }
    }

    /** Standardized KV events for this partition (POST /events), applied in order under their streams' rules. */
    public record ApplyStandardEvents(List<StandardEvent> events) {
        public ApplyStandardEvents {
            events = List.copyOf(events);
        }
    }

    /** What {@link ApplyStandardEvents} did: events applied, dropped as stale, and missing event_ids counted. */
    public record StandardEventsApplied(int applied, int stale, long gaps) {
    }

    /** Asks for the partition's /dump value (the JSON object with block_size and events). */
    public record Dump() {
        public static final Dump INSTANCE = new Dump();
    }

    public record DumpReply(String json) {
    }

    /** Asks for the partition's size figures, for /metrics. */
    public record Stats() {
        public static final Stats INSTANCE = new Stats();
    }

    /** {@code heldPerTier[t]}: (block, holder) pairs of tier ordinal t; {@code deviceBlocks}: distinct device blocks. */
    public record StatsReply(long[] heldPerTier, long deviceBlocks) {
    }
}

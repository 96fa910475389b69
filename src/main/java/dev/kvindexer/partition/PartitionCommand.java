package dev.kvindexer.partition;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.StandardEvent;
import dev.kvindexer.hash.LocalHashes;
import dev.kvindexer.metrics.Spans;
import java.util.List;

/**
 * The partition actor's protocol: what {@link LocalPartition} sends and {@link PartitionVerticle} runs, one command at
 * a time on the partition's event loop. Each command knows which {@link Partition} operation it is and what it
 * answers ({@link #DONE} when the answer is only that it ran).
 */
sealed interface PartitionCommand {
    Object DONE = Boolean.TRUE;

    Object runOn(Partition partition);

    /** Whether running it may change the index, so its size is reported to the memory budget after. */
    default boolean changesIndex() {
        return true;
    }

    record OpenStream(StreamSpec stream) implements PartitionCommand {
        @Override
        public Object runOn(Partition partition) {
            partition.openStream(stream);
            return DONE;
        }
    }

    /** @param trace the batch's trace when it was sampled for tracing, else null */
    record ApplyLive(
            long workerId,
            int registeredRank,
            long generation,
            EventBatch batch,
            long heldBytes,
            Spans.BatchTrace trace)
            implements PartitionCommand {
        @Override
        public Object runOn(Partition partition) {
            partition.onLive(workerId, registeredRank, generation, batch);
            return DONE;
        }
    }

    record ApplyReplayed(
            long workerId, int registeredRank, long generation, long replayId, EventBatch batch, long heldBytes)
            implements PartitionCommand {
        @Override
        public Object runOn(Partition partition) {
            partition.onReplayed(workerId, registeredRank, generation, replayId, batch);
            return DONE;
        }
    }

    record ReplayFinished(long workerId, int registeredRank, long generation, long replayId)
            implements PartitionCommand {
        @Override
        public Object runOn(Partition partition) {
            partition.onReplayFinished(workerId, registeredRank, generation, replayId);
            return DONE;
        }
    }

    record RemoveStreams(long workerId, int dpRank, boolean lastOfWorker) implements PartitionCommand {
        @Override
        public Object runOn(Partition partition) {
            partition.removeStreams(workerId, dpRank, lastOfWorker);
            return DONE;
        }
    }

    record Recover(PeerSnapshot snapshot) implements PartitionCommand {
        @Override
        public Object runOn(Partition partition) {
            partition.recover(snapshot);
            return DONE;
        }
    }

    record Repair(RepairRequest request, PeerSnapshot peer) implements PartitionCommand {
        @Override
        public Object runOn(Partition partition) {
            return partition.repair(request, peer);
        }
    }

    record RepairFailed(RepairRequest request) implements PartitionCommand {
        @Override
        public boolean changesIndex() {
            return false;
        }

        @Override
        public Object runOn(Partition partition) {
            partition.repairFailed(request);
            return DONE;
        }
    }

    record Query(long[] hashes, PromptHashes kind) implements PartitionCommand {
        @Override
        public boolean changesIndex() {
            return false;
        }

        @Override
        public Object runOn(Partition partition) {
            return partition.query(hashes, kind);
        }
    }

    /** A token query's match, its hashes computed as the walk reaches them. */
    record LazyQuery(LocalHashes hashes) implements PartitionCommand {
        @Override
        public boolean changesIndex() {
            return false;
        }

        @Override
        public Object runOn(Partition partition) {
            return partition.query(hashes);
        }
    }

    record TieredQuery(long[] localHashes) implements PartitionCommand {
        @Override
        public boolean changesIndex() {
            return false;
        }

        @Override
        public Object runOn(Partition partition) {
            return partition.tieredQuery(localHashes);
        }
    }

    record EngineHashes(long workerId, int dpRank, long[] localHashes, int maxBlocks) implements PartitionCommand {
        @Override
        public boolean changesIndex() {
            return false;
        }

        @Override
        public Object runOn(Partition partition) {
            return partition.engineHashes(workerId, dpRank, localHashes, maxBlocks);
        }
    }

    record ApplyStandard(List<StandardEvent> events) implements PartitionCommand {
        public ApplyStandard {
            events = List.copyOf(events);
        }

        @Override
        public Object runOn(Partition partition) {
            return partition.applyStandard(events);
        }
    }

    record Snapshot(PartitionSnapshot.Order order) implements PartitionCommand {
        @Override
        public boolean changesIndex() {
            return false;
        }

        @Override
        public Object runOn(Partition partition) {
            return partition.snapshot(order);
        }
    }

    record SnapshotOf(long[] workerIds) implements PartitionCommand {
        @Override
        public boolean changesIndex() {
            return false;
        }

        @Override
        public Object runOn(Partition partition) {
            return partition.snapshotOf(workerIds);
        }
    }

    record Stats() implements PartitionCommand {
        @Override
        public boolean changesIndex() {
            return false;
        }

        @Override
        public Object runOn(Partition partition) {
            return partition.stats();
        }
    }
}

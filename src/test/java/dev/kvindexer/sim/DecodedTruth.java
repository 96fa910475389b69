package dev.kvindexer.sim;

import dev.kvindexer.event.EventBatch;
import dev.kvindexer.event.KvEvent;
import dev.kvindexer.wire.EngineBatchDecoder;
import dev.kvindexer.wire.MalformedBatchException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Rebuilds held blocks from wire payloads with the project's own decoder, as an indexer would: proves the truth an
 * engine reports is exactly what its batches say.
 */
final class DecodedTruth {
    private final long worker;
    private final int registeredRank;
    private final EngineBatchDecoder decoder;
    private final Map<String, HeldBlock> held = new HashMap<>();

    DecodedTruth(long worker, int registeredRank, int blockSize) {
        this.worker = worker;
        this.registeredRank = registeredRank;
        this.decoder = new EngineBatchDecoder(blockSize);
    }

    void apply(long seq, byte[] payload) throws MalformedBatchException {
        EventBatch batch = decoder.decode(seq, payload);
        if (batch.malformedEvents() + batch.blockSizeMismatches() + batch.filteredEvents() != 0) {
            throw new AssertionError("batch " + seq + " had skipped events: " + batch);
        }
        int rank = batch.effectiveRank(registeredRank);
        for (KvEvent e : batch.events()) {
            if (e instanceof KvEvent.Stored s) {
                Long parent = s.hasParent() ? s.parentHash() : null;
                for (int i = 0; i < s.size(); i++) {
                    String tier = s.tier().jsonName();
                    held.put(
                            tier + ":" + s.blockHashes()[i],
                            new HeldBlock(worker, rank, tier, s.blockHashes()[i], parent, s.tokensHashes()[i]));
                    parent = s.blockHashes()[i];
                }
            } else if (e instanceof KvEvent.Removed r) {
                for (long h : r.blockHashes()) {
                    if (held.remove(r.tier().jsonName() + ":" + h) == null) {
                        throw new AssertionError(
                                "batch " + seq + " removed an unknown block " + Long.toUnsignedString(h));
                    }
                }
            } else {
                held.clear();
            }
        }
    }

    Set<HeldBlock> held() {
        return new HashSet<>(held.values());
    }
}

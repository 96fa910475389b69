package dev.kvindexer.conductor.registry;

import dev.kvindexer.conductor.CppConductor;
import dev.kvindexer.conductor.wire.CppConductorBatchDecoder;
import dev.kvindexer.ingest.ExternalSink;
import dev.kvindexer.wire.MalformedBatchException;

/**
 * A C++ Conductor registration's stream: its batches are decoded by the reference's strict rules for its type and
 * applied to the conductor under its service key (docs/protocol/events.md#c-conductor-events). No sequence tracking:
 * its Store publisher has no replay.
 */
record CppConductorStream(String serviceKey, CppConductorBatchDecoder decoder, CppConductor conductor)
        implements ExternalSink {
    @Override
    public String name() {
        return "service=" + serviceKey;
    }

    @Override
    public Refused deliver(byte[] payload, Runnable applied) throws MalformedBatchException {
        CppConductorBatchDecoder.Batch batch = decoder.decode(payload);
        conductor.apply(serviceKey, batch.events(), applied);
        return batch.rejected() == 0 ? Refused.NONE : new Refused(batch.rejected(), batch.firstRejection());
    }
}

package dev.kvindexer.conductor.event;

import dev.kvindexer.event.StorageTier;

/**
 * What the C++ Mooncake Conductor's registrations publish, once checked (docs/protocol/events.md#c-conductor-events):
 * GPU blocks of a {@code vLLM}
 * registration, named by vLLM's own block keys, and Mooncake Store objects of a {@code Mooncake} registration, which
 * name the context they belong to. Keys are the low 64 bits of vLLM's block hash, unsigned in a long.
 */
public sealed interface CppConductorEvent
        permits CppConductorEvent.GpuStored,
                CppConductorEvent.GpuRemoved,
                CppConductorEvent.GpuCleared,
                CppConductorEvent.ObjectStored,
                CppConductorEvent.ObjectRemoved,
                CppConductorEvent.ObjectsCleared {

    /** The registration holds these keys on GPU. */
    record GpuStored(long[] keys) implements CppConductorEvent {}

    /** The registration no longer holds these keys on GPU. */
    record GpuRemoved(long[] keys) implements CppConductorEvent {}

    /** The registration dropped every GPU block. */
    record GpuCleared() implements CppConductorEvent {
        public static final GpuCleared INSTANCE = new GpuCleared();
    }

    /**
     * A Store object holds one block in {@code tier} ({@link StorageTier#HOST_PINNED} for CPU or
     * {@link StorageTier#DISK}) of the context (tenant, model, LoRA, block size); {@code blockHash} is the connector's
     * block hash as lower-case hex without a prefix, whose last 16 digits are {@code key}.
     */
    record ObjectStored(
            String tenantId,
            String modelName,
            String loraName,
            long blockSize,
            String backendId,
            String objectKey,
            StorageTier tier,
            long key,
            String blockHash)
            implements CppConductorEvent {}

    /**
     * A Store object is gone. The binding it was stored with is found by (backend, tenant, object, tier); the model,
     * block size and block hash (lower-case hex, as stored) when not null, the LoRA (null for ""), and the sequence
     * hashes when there are any (exactly the binding's key), must agree with it.
     */
    record ObjectRemoved(
            String tenantId,
            String modelName,
            String loraName,
            Long blockSize,
            String backendId,
            String objectKey,
            StorageTier tier,
            String blockHash,
            long[] seqHashes)
            implements CppConductorEvent {}

    /** Every object of {@code backendId} for {@code tenantId} is gone, in both tiers and every context. */
    record ObjectsCleared(String backendId, String tenantId) implements CppConductorEvent {}
}

package dev.kvindexer.sim;

import java.net.URI;
import java.time.Duration;

/** Simulations for end-to-end tests: vLLM's map batches, no drops, no restarts, ephemeral ports on loopback. */
public final class QuietSimulations {
    private QuietSimulations() {}

    /** {@code engines} × {@code dpRanks} of model {@code m} in group {@code default}, 16-token blocks. */
    public static SimulationConfig of(
            int engines, int dpRanks, EngineHashKind kind, long requests, long instanceIdBase, URI register) {
        return new SimulationConfig(
                engines,
                dpRanks,
                "127.0.0.1",
                "127.0.0.1",
                0,
                0,
                BatchEncoder.Format.VLLM_MAP,
                kind,
                16,
                256,
                0,
                requests,
                0,
                0,
                7,
                null,
                512,
                0,
                ReplayStyle.THREE_FRAME,
                "m",
                "default",
                instanceIdBase,
                register,
                "",
                Duration.ZERO,
                Duration.ZERO);
    }
}

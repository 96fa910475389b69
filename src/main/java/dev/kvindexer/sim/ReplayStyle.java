package dev.kvindexer.sim;

/** Shape of the engine's replay replies (docs/protocol/zmq.md#replay-protocol). */
public enum ReplayStyle {
    /** {@code [id, "", be64(seq), payload]}, sentinel {@code [id, "", ff*8, ""]}: SGLang and vLLM before v0.26. */
    THREE_FRAME,
    /** {@code [id, "", topic, be64(seq), payload]}, sentinel {@code [id, "", "", ff*8, ""]}: vLLM v0.26 and later. */
    FOUR_FRAME;

    /** CLI spelling: 3 or 4. */
    public static ReplayStyle ofFrames(int frames) {
        if (frames == 3) {
            return THREE_FRAME;
        }
        if (frames == 4) {
            return FOUR_FRAME;
        }
        throw new IllegalArgumentException("replay style must be 3 or 4: " + frames);
    }
}

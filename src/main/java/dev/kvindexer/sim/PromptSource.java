package dev.kvindexer.sim;

/** A stream of prompts (token ids) to feed engines. */
public interface PromptSource extends AutoCloseable {
    /** The next prompt, or null when the source is exhausted. */
    int[] next();

    @Override
    default void close() {}
}

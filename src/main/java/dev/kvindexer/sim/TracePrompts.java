package dev.kvindexer.sim;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Prompts from a Mooncake-style jsonl trace ({@code {"timestamp", "input_length", "output_length", "hash_ids"}}),
 * read lazily line by line. Timestamps are ignored: the simulation's rate paces requests.
 */
public final class TracePrompts implements PromptSource {
    /** One trace line. */
    public record TraceRequest(long timestampMs, int inputLength, int outputLength, long[] hashIds) {
        public static TraceRequest parse(String line) {
            JsonObject o = new JsonObject(line);
            JsonArray ids = o.getJsonArray("hash_ids", new JsonArray());
            long[] hashIds = new long[ids.size()];
            for (int i = 0; i < hashIds.length; i++) {
                hashIds[i] = ids.getLong(i);
            }
            return new TraceRequest(
                    o.getLong("timestamp", 0L),
                    o.getInteger("input_length", 0),
                    o.getInteger("output_length", 0),
                    hashIds);
        }
    }

    private final BufferedReader reader;
    private final TraceBlocks blocks;
    private final Path file;
    private long lineNumber;

    public TracePrompts(Path file, TraceBlocks blocks) throws IOException {
        this.file = file;
        this.reader = Files.newBufferedReader(file, StandardCharsets.UTF_8);
        this.blocks = blocks;
    }

    /** The next trace line, or null at the end of the file; blank lines are skipped. */
    public TraceRequest nextRequest() {
        try {
            String line;
            while ((line = reader.readLine()) != null) {
                lineNumber++;
                if (!line.isBlank()) {
                    try {
                        return TraceRequest.parse(line);
                    } catch (RuntimeException e) {
                        throw new IllegalArgumentException(file + ":" + lineNumber + ": " + e.getMessage(), e);
                    }
                }
            }
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public int[] next() {
        TraceRequest r = nextRequest();
        return r == null ? null : blocks.prompt(r.hashIds(), r.inputLength());
    }

    @Override
    public void close() {
        try {
            reader.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

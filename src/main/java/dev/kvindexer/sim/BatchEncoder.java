package dev.kvindexer.sim;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;

/**
 * Encodes EventBatch payloads byte-for-byte as msgspec does for vLLM and SGLang (docs/protocol/events.md), so the
 * simulator and tests speak the engines' real wire format.
 */
public final class BatchEncoder {
    /** Wire formats of the engines we imitate. */
    public enum Format {
        /** vLLM v0.24+ : tagged-map events. */
        VLLM_MAP,
        /** vLLM medium era (before lora_name): 7-element BlockStored arrays; identical to SGLang's array era. */
        VLLM_ARRAY,
        /** SGLang array era: like VLLM_ARRAY but hashes are signed int64 on the wire. */
        SGLANG_ARRAY
    }

    private BatchEncoder() {}

    /** {@code [ts, events, rank]}; a null rank is encoded as nil. */
    public static byte[] batch(Format format, double ts, List<EngineEvent> events, Integer rank) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(3);
            p.packDouble(ts);
            p.packArrayHeader(events.size());
            for (EngineEvent e : events) {
                if (format == Format.VLLM_MAP) {
                    packMapEvent(p, e);
                } else {
                    packArrayEvent(p, e, format == Format.SGLANG_ARRAY);
                }
            }
            if (rank == null) {
                p.packNil();
            } else {
                p.packInt(rank);
            }
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void packMapEvent(MessagePacker p, EngineEvent e) throws IOException {
        if (e instanceof EngineEvent.Store s) {
            p.packMapHeader(8);
            p.packString("type").packString("BlockStored");
            p.packString("block_hashes");
            packHashes(p, s.blockHashes(), false);
            p.packString("parent_block_hash");
            packParent(p, s.parent(), false);
            p.packString("token_ids");
            packTokens(p, s.tokenIds());
            p.packString("block_size").packInt(s.blockSize());
            p.packString("lora_id").packNil();
            p.packString("medium");
            packNullable(p, s.medium());
            p.packString("lora_name");
            packNullable(p, s.loraName());
        } else if (e instanceof EngineEvent.Remove r) {
            p.packMapHeader(3);
            p.packString("type").packString("BlockRemoved");
            p.packString("block_hashes");
            packHashes(p, r.blockHashes(), false);
            p.packString("medium");
            packNullable(p, r.medium());
        } else {
            p.packMapHeader(1);
            p.packString("type").packString("AllBlocksCleared");
        }
    }

    private static void packArrayEvent(MessagePacker p, EngineEvent e, boolean signedHashes) throws IOException {
        if (e instanceof EngineEvent.Store s) {
            p.packArrayHeader(7);
            p.packString("BlockStored");
            packHashes(p, s.blockHashes(), signedHashes);
            packParent(p, s.parent(), signedHashes);
            packTokens(p, s.tokenIds());
            p.packInt(s.blockSize());
            p.packNil();
            packNullable(p, s.medium());
        } else if (e instanceof EngineEvent.Remove r) {
            p.packArrayHeader(3);
            p.packString("BlockRemoved");
            packHashes(p, r.blockHashes(), signedHashes);
            packNullable(p, r.medium());
        } else {
            p.packArrayHeader(1);
            p.packString("AllBlocksCleared");
        }
    }

    private static void packHashes(MessagePacker p, long[] hashes, boolean signed) throws IOException {
        p.packArrayHeader(hashes.length);
        for (long h : hashes) {
            packHash(p, h, signed);
        }
    }

    private static void packParent(MessagePacker p, Long parent, boolean signed) throws IOException {
        if (parent == null) {
            p.packNil();
        } else {
            packHash(p, parent, signed);
        }
    }

    /** vLLM sends unsigned ints (uint64 for anything >= 2^32); SGLang sends signed int64. */
    private static void packHash(MessagePacker p, long h, boolean signed) throws IOException {
        if (signed || h >= 0) {
            p.packLong(h);
        } else {
            p.packBigInteger(new BigInteger(Long.toUnsignedString(h)));
        }
    }

    private static void packTokens(MessagePacker p, int[] tokens) throws IOException {
        p.packArrayHeader(tokens.length);
        for (int t : tokens) {
            p.packLong(Integer.toUnsignedLong(t));
        }
    }

    private static void packNullable(MessagePacker p, String s) throws IOException {
        if (s == null) {
            p.packNil();
        } else {
            p.packString(s);
        }
    }
}

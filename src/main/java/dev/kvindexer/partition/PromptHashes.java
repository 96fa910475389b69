package dev.kvindexer.partition;

/** What the hashes of a query name: the index's local hashes, Mooncake's rolling sequence hashes, or engine hashes. */
public enum PromptHashes {
    LOCAL,
    /** docs/protocol/hashing.md#rolling-sequence-hash (Mooncake's {@code /query_by_hash}). */
    SEQUENCE,
    /** An engine's own block hashes, as its KV events carry them (SGLang's router asks with them over gRPC). */
    ENGINE
}

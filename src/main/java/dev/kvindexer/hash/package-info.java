/**
 * Block hashing: XXH3-64 of token blocks with the reference's seeds (LoRA and salt), rolling sequence hashes, and
 * vLLM's sha256/CBOR and pickle profiles. Plain Java, no framework.
 */
package dev.kvindexer.hash;

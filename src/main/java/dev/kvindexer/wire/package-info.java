/**
 * Engine wire formats to events: msgpack batches of vLLM, SGLang and Mooncake, decoded leniently where the
 * reference is and strictly where a wrong value would corrupt an index. No framework.
 */
package dev.kvindexer.wire;

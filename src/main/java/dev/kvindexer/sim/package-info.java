/**
 * An engine simulator that speaks the real wire protocols (vLLM, SGLang) over ZMQ, with replay buffers, drops and
 * restarts: for the demo, the tests and the benchmarks.
 */
package dev.kvindexer.sim;

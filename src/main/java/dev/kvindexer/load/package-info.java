/**
 * Active-load accounting per worker rank (Dynamo's slot tracker): requests booked with their blocks, prefill and
 * decode load, expiry. Single-threaded plain Java, shared by the slot tracker and the selection core.
 */
package dev.kvindexer.load;

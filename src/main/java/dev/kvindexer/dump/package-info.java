/**
 * The /dump formats: Dynamo's JSON (written, streamed from a snapshot, and parsed) and the compact binary
 * snapshot nodes recover from, with readers that treat every document as untrusted.
 */
package dev.kvindexer.dump;

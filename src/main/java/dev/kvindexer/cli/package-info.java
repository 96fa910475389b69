/**
 * The commands (serve, slot-tracker, select-service, simulate): picocli options with env, config-file and bundled
 * defaults, turned into settings records.
 */
package dev.kvindexer.cli;

/**
 * The kvindexer service: {@code Main} parses the command line and runs a command (cli).
 */
package dev.kvindexer;

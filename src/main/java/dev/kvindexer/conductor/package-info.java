/**
 * The C++ Mooncake Conductor's state: its engine registrations and what it answers about them.
 */
package dev.kvindexer.conductor;

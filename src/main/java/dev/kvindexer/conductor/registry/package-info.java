/**
 * The C++ Conductor's registrations carried out: the conductor decides, then the ZMQ subscription opens or closes.
 */
package dev.kvindexer.conductor.registry;

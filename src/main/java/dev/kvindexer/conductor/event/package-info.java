/**
 * What the C++ Conductor's registrations publish once checked: GPU block and Store object events. Plain records, no
 * framework.
 */
package dev.kvindexer.conductor.event;

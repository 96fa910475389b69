/**
 * The selection service's adapter: its HTTP routes and JSON over the selection core, the embedded index it asks for
 * overlaps, and the queue of selections waiting for load to drop.
 */
package dev.kvindexer.selectservice;

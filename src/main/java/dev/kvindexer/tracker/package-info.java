/**
 * The slot tracker service's HTTP adapter over the load accounting.
 */
package dev.kvindexer.tracker;

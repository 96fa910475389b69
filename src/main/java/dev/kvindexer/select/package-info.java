/**
 * The selection core (Dynamo's worker selection): the roster of workers, choosing a rank by cost, bookings and their
 * lifecycle, and the mirror of other replicas' bookings. Single-threaded plain Java with no Vert.x.
 */
package dev.kvindexer.select;

/**
 * The selection core (Dynamo's worker selection): the worker catalog, the cost model and rank picking,
 * reservations and their lifecycle. Single-threaded plain Java with no Vert.x.
 */
package dev.kvindexer.select;

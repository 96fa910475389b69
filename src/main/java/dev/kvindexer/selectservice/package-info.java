/**
 * The selection service's adapter: its HTTP routes over the selection core, the embedded index it asks for
 * overlaps, and the replication of reservations between replicas (Dynamo's ZMQ replica sync, the cluster's map).
 */
package dev.kvindexer.selectservice;

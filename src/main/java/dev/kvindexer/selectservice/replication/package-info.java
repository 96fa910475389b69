/**
 * Replication of the selection service's reservations between replicas: Dynamo's best-effort ZMQ replica sync of
 * load events, and a Hazelcast cluster's shared map of reservation records.
 */
package dev.kvindexer.selectservice.replication;

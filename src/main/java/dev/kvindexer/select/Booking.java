package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;

/** A booking's answer (SPEC §12.7), with the prompt it booked. */
public record Booking(String selectionId, PartitionKey partition, WorkerEntry worker, int dpRank, Prompt prompt) {}

package dev.kvindexer.select;

import dev.kvindexer.event.PartitionKey;

/** A booking's answer (docs/api/selection.md#post-reservations), with the prompt it booked. */
public record Booking(String selectionId, PartitionKey partition, WorkerEntry worker, int dpRank, Prompt prompt) {}

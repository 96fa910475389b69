package dev.kvindexer.partition;

/** What a batch of standardized events did: events applied, dropped as stale, and missing event_ids counted. */
public record StandardEventsApplied(int applied, int stale, long gaps) {}

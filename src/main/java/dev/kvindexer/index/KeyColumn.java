package dev.kvindexer.index;

/** Where an {@link IdsByKey} table reads the 64-bit key of an id it lists, so the table need not store it again. */
interface KeyColumn {
    long key(int id);
}

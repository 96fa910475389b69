package dev.kvindexer.index;

/**
 * A lower-tier edge (docs/protocol/index.md#lower-tiers): (parent engine hash or none, local hash) → child engine hash
 * and owners.
 * An owner holds an edge exactly when its holdings map the edge's child hash to it.
 */
final class LowerEdge extends HolderSet {
    final boolean hasParent;
    final long parentHash;
    final long localHash;
    final long childHash;
    /** Next edge with the same parent: most parents have one child, so a list beats a map. */
    LowerEdge nextSibling;

    LowerEdge(boolean hasParent, long parentHash, long localHash, long childHash) {
        this.hasParent = hasParent;
        this.parentHash = hasParent ? parentHash : 0L;
        this.localHash = localHash;
        this.childHash = childHash;
    }
}

package dev.kvindexer.grpc;

import dev.kvindexer.grpc.v1.ExternalKvPrefixMatch;
import dev.kvindexer.grpc.v1.MatchExternalKvPrefixResponse;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** One {@code MatchExternalKvPrefix} answer from the bridge's reports and the engines the node reads itself. */
final class PrefixAnswers {
    /** Longest first; equal matches in worker id order, so the answer does not depend on who answered first. */
    static final Comparator<ExternalKvPrefixMatch> LONGEST_FIRST = Comparator.comparingInt(
                    ExternalKvPrefixMatch::getMatchedPrefixBlocks)
            .reversed()
            .thenComparing(ExternalKvPrefixMatch::getWorkerId);

    private PrefixAnswers() {}

    static MatchExternalKvPrefixResponse merge(
            MatchExternalKvPrefixResponse reported, List<RegisteredEngines.Holder> engines, int limit) {
        if (engines.isEmpty()) {
            return reported;
        }
        Map<String, ExternalKvPrefixMatch> byWorker = new LinkedHashMap<>();
        reported.getMatchesList().forEach(m -> byWorker.put(m.getWorkerId(), m));
        for (RegisteredEngines.Holder e : engines) {
            if (e.address() == null || e.address().isEmpty() || e.blocks() <= 0) {
                continue;
            }
            ExternalKvPrefixMatch m = ExternalKvPrefixMatch.newBuilder()
                    .setWorkerId(e.workerId())
                    .setWorkerAddress(e.address())
                    .setMatchedPrefixBlocks(e.blocks())
                    .build();
            byWorker.merge(e.workerId(), m, (a, b) -> a.getMatchedPrefixBlocks() >= b.getMatchedPrefixBlocks() ? a : b);
        }
        List<ExternalKvPrefixMatch> matches = new ArrayList<>(byWorker.values());
        matches.sort(LONGEST_FIRST);
        return MatchExternalKvPrefixResponse.newBuilder()
                .addAllMatches(matches)
                .setBestPrefixBlocks(matches.isEmpty() ? 0 : matches.get(0).getMatchedPrefixBlocks())
                // The partition's walk may read every block considered.
                .setBlocksRead(Math.max(reported.getBlocksRead(), limit))
                .build();
    }
}

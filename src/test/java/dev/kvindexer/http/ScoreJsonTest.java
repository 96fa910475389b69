package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.index.OwnerMatches;
import java.util.List;
import org.junit.jupiter.api.Test;

class ScoreJsonTest {
    @Test
    void emptyResult() {
        assertEquals(
                "{\"scores\":{},\"frequencies\":[],\"instances\":{}}",
                ScoreJson.render(OwnerMatches.of(List.of()), 16).toString());
    }

    @Test
    void t6MultiRankSummaryWithUnsignedIdsInReferenceMemberOrder() {
        // T6 of docs/protocol/index.md#test-vectors, first row, plus a worker id above 2^63 and a lower-tier-only rank.
        List<OwnerMatch> matches =
                List.of(new OwnerMatch(-1L, 4, 0, 1, 1), new OwnerMatch(7, 1, 1, 1, 2), new OwnerMatch(7, 0, 2, 3, 5));
        assertEquals(
                "{\"scores\":{\"7\":{\"0\":32,\"1\":16}},\"frequencies\":[],\"instances\":{"
                        + "\"7\":{\"longest_matched\":80,\"gpu\":32,\"dp\":{\"0\":32,\"1\":16},\"cpu\":48,\"disk\":80},"
                        + "\"18446744073709551615\":{\"longest_matched\":16,\"gpu\":0,\"dp\":{\"4\":0},\"cpu\":16,\"disk\":16}}}",
                ScoreJson.render(OwnerMatches.of(matches), 16).toString());
    }
}

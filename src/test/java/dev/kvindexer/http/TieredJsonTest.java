package dev.kvindexer.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kvindexer.event.StorageTier;
import dev.kvindexer.index.TieredMatch;
import dev.kvindexer.partition.TieredQueryResult;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The tiered answer's bytes: every member present, ids unsigned, a lower tier as a [name, {hits}] pair. */
class TieredJsonTest {
    @Test
    void aDeviceMatchAndAHostTierAreWrittenAsDynamosRouterReadsThem() {
        TieredMatch.Owners device = new TieredMatch.Owners(new long[] {-1L, 7}, new int[] {0, 3}, new int[] {12, 0});
        TieredMatch.Owners host = new TieredMatch.Owners(new long[] {Long.MIN_VALUE}, new int[] {1}, new int[] {5});
        TieredQueryResult reply = new TieredQueryResult(
                16, new TieredMatch(device, List.of(new TieredMatch.Tier(StorageTier.HOST_PINNED, host))), 0);
        assertEquals(
                "{\"block_size\":16,\"tiered\":{\"device\":{\"scores\":[[{\"worker_id\":18446744073709551615,"
                        + "\"dp_rank\":0},12],[{\"worker_id\":7,\"dp_rank\":3},0]],\"frequencies\":[]},"
                        + "\"lower_tier\":[[\"host_pinned\",{\"hits\":[[{\"worker_id\":9223372036854775808,"
                        + "\"dp_rank\":1},5]]}]]}}",
                TieredJson.bytes(reply).toString());
        TieredQueryResult none = new TieredQueryResult(
                4, new TieredMatch(new TieredMatch.Owners(new long[0], new int[0], new int[0]), List.of()), 0);
        assertEquals(
                "{\"block_size\":4,\"tiered\":{\"device\":{\"scores\":[],\"frequencies\":[]},\"lower_tier\":[]}}",
                TieredJson.bytes(none).toString());
    }
}

package dev.kvindexer.select;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Dynamo's cost-function vectors for the cost of docs/api/selection.md#cost: conformance check C18. */
class CostModelTest {
    private static final SelectionConfig D = SelectionConfig.DEFAULTS;

    private static CostModel model(long isl, int b) {
        return CostModel.of(isl, b, D, ConfigOverride.NONE);
    }

    private static RankInputs rank(
            long id, int dev, int host, int disk, long prefill, long decode, int requests, int newBlocks) {
        return new RankInputs(id, 0, dev, host, disk, prefill, decode, requests, newBlocks, 1.0);
    }

    private static int cheapest(CostModel m, RankInputs... ranks) {
        long minPrefill = Long.MAX_VALUE;
        for (RankInputs r : ranks) {
            minPrefill = Math.min(minPrefill, r.prefill());
        }
        double[] logits = new double[ranks.length];
        for (int i = 0; i < ranks.length; i++) {
            logits[i] = m.logit(ranks[i], minPrefill);
        }
        return RankPicker.pick(logits, 0, new Random(1));
    }

    @Test
    void e1DocumentationExampleChoosesTheMinimum() {
        CostModel m = model(160, 16);
        RankInputs w1 = rank(1, 2, 0, 0, 0, 10, 0, 0);
        RankInputs w2 = rank(2, 5, 0, 0, 0, 5, 0, 0);
        RankInputs w3 = rank(3, 8, 0, 0, 0, 9, 0, 0);
        assertEquals(18.0, m.logit(w1, 0));
        assertEquals(10.0, m.logit(w2, 0));
        assertEquals(11.0, m.logit(w3, 0));
        assertEquals(1, cheapest(m, w1, w2, w3));
    }

    @Test
    void e2LoadBeatsCache() {
        CostModel m = model(64, 16);
        RankInputs w1 = rank(1, 4, 0, 0, 0, 20, 0, 0);
        RankInputs w2 = rank(2, 0, 0, 0, 0, 0, 0, 4);
        assertEquals(20.0, m.logit(w1, 0));
        assertEquals(8.0, m.logit(w2, 0));
        assertEquals(1, cheapest(m, w1, w2));
        assertEquals(64, m.effectivePrefill(w2));
    }

    @Test
    void e4LowerTiersEarnWeightedCredit() {
        CostModel m = model(128, 16);
        RankInputs w1 = rank(1, 2, 4, 0, 0, 0, 0, 8);
        RankInputs w2 = rank(2, 4, 0, 0, 0, 0, 0, 8);
        assertEquals(80, m.cachedTokens(w1));
        assertEquals(11.0, m.logit(w1, 0));
        assertEquals(12.0, m.logit(w2, 0));
        assertEquals(0, cheapest(m, w1, w2));
        assertEquals(48, m.effectivePrefill(w1));
    }

    @Test
    void e5PrefillTrackingFlipsTheChoice() {
        RankInputs w1 = rank(1, 2, 0, 0, 128, 8, 0, 4);
        RankInputs w2 = rank(2, 0, 0, 0, 0, 10, 0, 4);
        CostModel on = model(64, 16);
        assertEquals(22.0, on.logit(w1, 0));
        assertEquals(18.0, on.logit(w2, 0));
        assertEquals(1, cheapest(on, w1, w2));
        CostModel off = CostModel.of(64, 16, D, new ConfigOverride(null, null, null, null, null, false, null));
        assertEquals(12.0, off.logit(w1, 0));
        assertEquals(14.0, off.logit(w2, 0));
        assertEquals(0, cheapest(off, w1, w2));
    }

    @Test
    void e6SoftmaxProbabilities() {
        double[] logits = {18, 10, 11};
        assertArrayEquals(new double[] {0.16347, 0.44437, 0.39216}, RankPicker.probabilities(logits, 1.0), 5e-6);
        assertArrayEquals(new double[] {0.07070, 0.52243, 0.40687}, RankPicker.probabilities(logits, 0.5), 5e-6);
        Random random = new Random(42);
        int w2 = 0;
        int draws = 10_000;
        for (int i = 0; i < draws; i++) {
            if (RankPicker.pick(logits, 1.0, random) == 1) {
                w2++;
            }
        }
        assertEquals(0.444, (double) w2 / draws, 0.015);
    }

    @Test
    void e7CreditDecayPrefersTheLessLoadedColdRank() {
        RankInputs w0 = rank(0, 4, 0, 0, 48, 0, 0, 4);
        RankInputs w1 = rank(1, 0, 0, 0, 0, 0, 0, 4);
        CostModel plain = model(64, 16);
        assertEquals(7.0, plain.logit(w0, 0));
        assertEquals(8.0, plain.logit(w1, 0));
        SelectionConfig decayed =
                SelectionConfig.fromEnvironment(Map.of("DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT_DECAY", "1"));
        CostModel m = CostModel.of(64, 16, decayed, ConfigOverride.NONE);
        assertEquals(8.714286, m.logit(w0, 0), 1e-6);
        assertEquals(8.0, m.logit(w1, 0));
        assertEquals(1, cheapest(m, w0, w1));
    }

    @Test
    void e8DeprecatedWeightMapsToScaleAndZeroCredit() {
        RankInputs w1 = rank(1, 4, 0, 0, 0, 20, 0, 0);
        RankInputs w2 = rank(2, 0, 0, 0, 0, 0, 0, 4);
        CostModel zero = CostModel.of(64, 16, D, new ConfigOverride(null, null, 0.0, null, null, null, null));
        assertEquals(20.0, zero.logit(w1, 0));
        assertEquals(4.0, zero.logit(w2, 0));
        CostModel heavy = CostModel.of(64, 16, D, new ConfigOverride(null, null, 2.5, null, null, null, null));
        assertEquals(20.0, heavy.logit(w1, 0));
        assertEquals(14.0, heavy.logit(w2, 0));
        SelectionConfig env = SelectionConfig.fromEnvironment(Map.of("DYN_OVERLAP_SCORE_WEIGHT", "0"));
        assertEquals(0.0, env.credit());
        assertEquals(0.0, env.scale());
    }

    @Test
    void e9ReferenceUnitVector() {
        RankInputs r = rank(1, 6, 0, 0, 16, 2, 0, 3);
        assertEquals(
                7.0,
                CostModel.of(64, 16, D, new ConfigOverride(null, 2.0, null, null, null, null, null))
                        .logit(r, 0));
        assertEquals(
                5.0,
                CostModel.of(64, 16, D, new ConfigOverride(null, 2.0, null, null, null, false, null))
                        .logit(r, 0));
    }

    @Test
    void e10ActiveRequestWeight() {
        RankInputs r = rank(1, 0, 0, 0, 0, 100, 4, 0);
        assertEquals(100.0, model(0, 16).logit(r, 0));
        SelectionConfig weighted =
                SelectionConfig.fromEnvironment(Map.of("DYN_ROUTER_DECODE_ACTIVE_REQUEST_WEIGHT", "32"));
        assertEquals(228.0, CostModel.of(0, 16, weighted, ConfigOverride.NONE).logit(r, 0));
    }

    @Test
    void e11PartialBlockCountsFractionally() {
        CostModel m = model(70, 16);
        RankInputs w1 = rank(1, 4, 0, 0, 0, 4, 0, 0);
        RankInputs w2 = rank(2, 0, 0, 0, 0, 0, 0, 4);
        assertEquals(4.375, m.logit(w1, 0));
        assertEquals(6, m.effectivePrefill(w1));
        assertEquals(8.375, m.logit(w2, 0));
        assertEquals(0, cheapest(m, w1, w2));
    }

    @Test
    void e12EffectivePrefillOfTheDocumentationResponse() {
        assertEquals(416, model(512, 16).effectivePrefill(rank(1, 4, 2, 2, 0, 0, 0, 0)));
    }

    @Test
    void e13PreferredTaintsScaleTheLogit() {
        CostModel m = model(16, 16);
        RankInputs w10 = new RankInputs(10, 0, 0, 0, 0, 0, 100, 0, 0, CostModel.taintMultiplier(0.85));
        RankInputs w20 = rank(20, 0, 0, 0, 0, 90, 0, 0);
        assertEquals(50.605, m.logit(w10, 0), 5e-4);
        assertEquals(91.0, m.logit(w20, 0));
        assertEquals(0, cheapest(m, w10, w20));
        RankInputs repelled = new RankInputs(10, 0, 0, 0, 0, 0, 90, 0, 0, CostModel.taintMultiplier(-0.25));
        RankInputs other = rank(20, 0, 0, 0, 0, 100, 0, 0);
        assertEquals(116.254, m.logit(repelled, 0), 5e-4);
        assertEquals(1, cheapest(m, repelled, other));
    }

    @Test
    void tiesAtTemperatureZeroAreBrokenAtRandomOverEveryTiedRank() {
        double[] logits = {3, 2, 2, 5, 2};
        Random random = new Random(3);
        boolean[] seen = new boolean[logits.length];
        for (int i = 0; i < 300; i++) {
            int k = RankPicker.pick(logits, 0, random);
            assertTrue(logits[k] == 2, "only a cheapest rank is chosen");
            seen[k] = true;
        }
        assertTrue(seen[1] && seen[2] && seen[4], "every tied rank is chosen over many draws");
    }

    @Test
    void outOfRangeSettingsAreAStartupError() {
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> SelectionConfig.fromEnvironment(Map.of("DYN_ROUTER_TEMPERATURE", "-1")));
        assertTrue(e.getMessage().startsWith("invalid KV router configuration: ")
                && e.getMessage().contains("router_temperature"));
        assertEquals(
                D,
                SelectionConfig.fromEnvironment(
                        Map.of("DYN_ROUTER_TEMPERATURE", "warm", "DYN_ROUTER_TRACK_PREFILL_TOKENS", "maybe")),
                "unparsable values keep the defaults");
        assertTrue(!SelectionConfig.fromEnvironment(Map.of("DYN_USE_KV_EVENTS", "off"))
                .useKvEvents());
    }
}

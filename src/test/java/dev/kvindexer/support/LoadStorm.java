package dev.kvindexer.support;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Clients booking, completing and freeing reservations against every replica at once, keeping what each of them
 * holds, so that the loads the replicas report can be compared with the truth. A request that fails without an
 * answer (its replica died) leaves its reservation uncertain; the client settles it by freeing it elsewhere, as a
 * careful client would. ({@link HttpJson} reports a request that got no answer as an {@link AssertionError}.)
 */
public final class LoadStorm {
    /**
     * What a client holds: the rank it was given, its blocks, its prefill until completed, and when it asked for it
     * ({@link System#nanoTime}), which is no later than when the replica booked it.
     */
    public record Held(long worker, int rank, List<Long> blocks, long prefill, boolean prefillDone, long askedNanos) {}

    private final Supplier<List<HttpJson>> replicas;
    private final Map<String, Held> held = new ConcurrentHashMap<>();
    private final Set<String> uncertain = ConcurrentHashMap.newKeySet();
    private final AtomicInteger counter = new AtomicInteger();
    public final AtomicInteger booked = new AtomicInteger();
    public final AtomicInteger freed = new AtomicInteger();
    public final AtomicInteger failed = new AtomicInteger();

    public LoadStorm(Supplier<List<HttpJson>> replicas) {
        this.replicas = replicas;
    }

    /** Runs {@code clients} threads until {@code stop} is set; returns once all have stopped. */
    public void run(int clients, AtomicBoolean stop) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            Thread t = new Thread(
                    () -> {
                        while (!stop.get()) {
                            step();
                        }
                    },
                    "storm-client-" + c);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    private HttpJson anyReplica() {
        List<HttpJson> all = replicas.get();
        return all.get(ThreadLocalRandom.current().nextInt(all.size()));
    }

    private void step() {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        List<String> mine = new ArrayList<>(held.keySet());
        int action = rnd.nextInt(10);
        try {
            if (action < 5 || mine.isEmpty()) {
                book(rnd);
            } else if (action < 8) {
                free(mine.get(rnd.nextInt(mine.size())));
            } else {
                complete(mine.get(rnd.nextInt(mine.size())));
            }
        } catch (RuntimeException | AssertionError e) {
            failed.incrementAndGet();
        }
    }

    private void book(ThreadLocalRandom rnd) {
        String id = "s" + counter.incrementAndGet();
        JsonArray tokens = new JsonArray();
        int prompt = rnd.nextInt(1, 4);
        for (int i = 0; i < 4 * prompt + rnd.nextInt(4); i++) {
            tokens.add(i < 4 ? rnd.nextInt(3) : rnd.nextInt(1000)); // shared first blocks now and then
        }
        HttpResponse<String> r;
        long asked = System.nanoTime();
        try {
            r = anyReplica()
                    .post(
                            "/select_and_reserve",
                            new JsonObject()
                                    .put("model_name", "model")
                                    .put("token_ids", tokens)
                                    .put("selection_id", id)
                                    .encode());
        } catch (RuntimeException | AssertionError e) {
            uncertain.add(id);
            throw e;
        }
        if (r.statusCode() != 200) {
            failed.incrementAndGet();
            if (r.statusCode() >= 500) {
                uncertain.add(id); // the replica may have booked it before failing
            }
            return;
        }
        JsonObject b = new JsonObject(r.body());
        List<Long> blocks = new ArrayList<>();
        b.getJsonArray("sequence_hashes").forEach(h -> blocks.add(((Number) h).longValue()));
        held.put(
                id,
                new Held(
                        b.getLong("worker_id"),
                        b.getInteger("dp_rank"),
                        blocks,
                        b.getLong("effective_prefill_tokens"),
                        false,
                        asked));
        booked.incrementAndGet();
    }

    private void free(String id) {
        if (held.remove(id) == null) {
            return;
        }
        HttpResponse<String> r;
        try {
            r = anyReplica().send("DELETE", "/reservations/" + id);
        } catch (RuntimeException | AssertionError e) {
            uncertain.add(id);
            throw e;
        }
        if (r.statusCode() == 200) {
            freed.incrementAndGet();
        } else {
            failed.incrementAndGet();
            if (r.statusCode() >= 500) {
                uncertain.add(id);
            }
        }
    }

    private void complete(String id) {
        Held h = held.get(id);
        if (h == null || h.prefillDone()) {
            return;
        }
        HttpResponse<String> r = anyReplica().post("/reservations/" + id + "/prefill_complete", "");
        if (r.statusCode() == 200) {
            held.computeIfPresent(
                    id, (k, v) -> new Held(v.worker(), v.rank(), v.blocks(), v.prefill(), true, v.askedNanos()));
        }
    }

    /** Frees everything the clients hold; what fails to answer becomes uncertain. */
    public void freeAll() {
        for (String id : new ArrayList<>(held.keySet())) {
            try {
                free(id);
            } catch (RuntimeException | AssertionError e) {
                failed.incrementAndGet();
            }
        }
    }

    /** Frees every uncertain reservation on a live replica: 200 if it existed, 404 if it never did. */
    public void settle() {
        for (String id : new ArrayList<>(uncertain)) {
            HttpResponse<String> r = anyReplica().send("DELETE", "/reservations/" + id);
            if (r.statusCode() == 200 || r.statusCode() == 404) {
                uncertain.remove(id);
                held.remove(id);
            }
        }
    }

    public int uncertainCount() {
        return uncertain.size();
    }

    /** "worker/rank" → "requests/decode blocks/prefill tokens" for what the clients hold, every rank listed. */
    public Map<String, String> expected(List<String> ranks) {
        return expected(ranks, h -> true);
    }

    /**
     * The same for what the clients hold and asked for less than {@code expiry} ago: what a replica must still count
     * however slow the test ran, since it booked each no earlier than it was asked.
     */
    public Map<String, String> unexpired(List<String> ranks, Duration expiry) {
        long cutoff = System.nanoTime() - expiry.toNanos();
        return expected(ranks, h -> h.askedNanos() - cutoff > 0);
    }

    private Map<String, String> expected(List<String> ranks, Predicate<Held> counted) {
        Map<String, int[]> requests = new HashMap<>();
        Map<String, Set<Long>> blocks = new HashMap<>();
        Map<String, long[]> prefill = new HashMap<>();
        for (Held h : held.values()) {
            if (!counted.test(h)) {
                continue;
            }
            String k = h.worker() + "/" + h.rank();
            requests.computeIfAbsent(k, x -> new int[1])[0]++;
            blocks.computeIfAbsent(k, x -> new HashSet<>()).addAll(h.blocks());
            if (!h.prefillDone()) {
                prefill.computeIfAbsent(k, x -> new long[1])[0] += h.prefill();
            }
        }
        Map<String, String> out = new TreeMap<>();
        for (String k : ranks) {
            out.put(
                    k,
                    (requests.containsKey(k) ? requests.get(k)[0] : 0) + "/"
                            + (blocks.containsKey(k) ? blocks.get(k).size() : 0) + "/"
                            + (prefill.containsKey(k) ? prefill.get(k)[0] : 0));
        }
        return out;
    }

    /** The same view of one replica's /loads. */
    public static Map<String, String> reported(HttpJson replica) {
        Map<String, String> out = new TreeMap<>();
        for (Object p : new JsonArray(replica.get("/loads").body())) {
            for (Object o : ((JsonObject) p).getJsonArray("loads")) {
                JsonObject row = (JsonObject) o;
                out.put(
                        row.getLong("worker_id") + "/" + row.getInteger("dp_rank"),
                        row.getInteger("active_requests") + "/" + row.getLong("potential_decode_blocks") + "/"
                                + row.getLong("potential_prefill_tokens"));
            }
        }
        return out;
    }

    /**
     * Waits, within the suite's patience, until the storm has booked {@code bookedAtLeast} and freed
     * {@code freedAtLeast}: a loaded machine books slowly, so a storm's length is its work as well as its time.
     */
    public void awaitWork(int bookedAtLeast, int freedAtLeast) throws InterruptedException {
        long deadline = System.nanoTime() + Await.PATIENCE.toNanos();
        while ((booked.get() < bookedAtLeast || freed.get() < freedAtLeast) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
    }
}

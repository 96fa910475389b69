package dev.kvindexer.sim;

import dev.kvindexer.wire.LiveFrames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * One simulated engine rank speaking the real wire protocol: a bound publisher (3-frame live batches,
 * docs/protocol/zmq.md#live-messages), a
 * bound ROUTER answering replay requests from a ring of the last 10,000 batches (docs/protocol/zmq.md#replay-protocol),
 * and a {@link KvCacheModel}
 * deciding what each request stores and evicts. All sockets live on the engine's own thread, which interleaves
 * requests with replay service; other threads talk to it through a queue.
 *
 * <p>The publisher is an XPUB: identical to a PUB on the wire, but it lets tests wait for a subscriber instead of
 * sleeping through the slow-joiner window (docs/protocol/zmq.md#slow-joiner).
 */
public final class SimulatedEngine implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SimulatedEngine.class);
    private static final byte[] EMPTY = new byte[0];
    private static final byte[] SENTINEL_SEQ = LiveFrames.seqFrame(-1L);
    private static final int QUEUE_CAPACITY = 10_000;
    private static final int HWM = 100_000;
    private static final int COMMANDS_PER_TURN = 256;
    private static final long BIND_RETRY_MS = 5_000;

    private final EngineConfig config;
    private final byte[] topic;
    private final KvCacheModel model;
    private final BlockingQueue<Command> queue = new LinkedBlockingQueue<>(QUEUE_CAPACITY);
    private final CompletableFuture<Void> bound = new CompletableFuture<>();
    private final Thread thread;
    private final Object progress = new Object();
    private long accepted; // guarded by progress: commands queued
    private long completed; // guarded by progress: commands executed
    private volatile boolean running = true;
    private volatile Throwable failure;

    private volatile int livePort;
    private volatile int replayPort;
    private volatile int generation;
    private volatile long generationBatches;
    private volatile long totalBatches;
    private volatile long droppedBatches;
    private volatile long subscriptions;
    private volatile long replaysServed;
    private volatile long replayedBatches;
    private volatile long replaysIgnored;

    // Engine-thread state.
    private final ReplayBuffer buffer;
    private ZContext ctx;
    private ZMQ.Socket pub;
    private ZMQ.Socket router;
    private ZMQ.Poller poller;
    private DropSchedule drops;
    private long processSeed;

    private SimulatedEngine(EngineConfig config) {
        this.config = config;
        this.buffer = new ReplayBuffer(config.replayCapacity());
        this.topic = config.topic().getBytes(StandardCharsets.UTF_8);
        this.model = new KvCacheModel(
                config.instanceId(),
                config.dpRank(),
                config.blockSize(),
                config.capacity(),
                config.hostCapacity(),
                config.deviceMedium(),
                config.hostMedium());
        this.livePort = config.livePort();
        this.replayPort = config.replayPort();
        this.thread = new Thread(
                this::run, "sim-engine-" + Long.toUnsignedString(config.instanceId()) + "-dp" + config.dpRank());
        this.thread.setDaemon(true);
    }

    /** Binds both sockets and starts serving; returns once they are bound. */
    public static SimulatedEngine start(EngineConfig config) {
        SimulatedEngine engine = new SimulatedEngine(config);
        engine.thread.start();
        try {
            engine.bound.get(BIND_RETRY_MS + 5_000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            engine.close();
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            throw new IllegalStateException(
                    "engine " + engine.thread.getName() + " failed to bind: " + cause.getMessage(), cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            engine.close();
            throw new IllegalStateException("interrupted while starting " + engine.thread.getName(), e);
        }
        return engine;
    }

    public EngineConfig config() {
        return config;
    }

    public long instanceId() {
        return config.instanceId();
    }

    public int dpRank() {
        return config.dpRank();
    }

    /** Where a subscriber connects, e.g. {@code tcp://127.0.0.1:5557}. */
    public String endpoint() {
        return "tcp://" + config.advertiseHost() + ":" + livePort;
    }

    /** Where a replay DEALER connects. */
    public String replayEndpoint() {
        return "tcp://" + config.advertiseHost() + ":" + replayPort;
    }

    public int livePort() {
        return livePort;
    }

    public int replayPort() {
        return replayPort;
    }

    /** Queues one request (a prompt's tokens); blocks while 10,000 commands are already waiting. */
    public void submit(int[] promptTokens) {
        enqueue(new Request(promptTokens));
    }

    /**
     * Restarts the engine process in order with the queued requests: closes both sockets, forgets its cache and replay
     * buffer, and binds new sockets on the same ports; the next batch has seq 0. Returns once the new sockets are bound.
     */
    public void restart() {
        Restart r = new Restart(new CompletableFuture<>());
        enqueue(r);
        try {
            r.done().get(BIND_RETRY_MS + 30_000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during restart", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("restart of " + thread.getName() + " failed", e);
        }
    }

    /**
     * Waits until every request submitted so far has been published (or dropped on the live path). Returns false on
     * timeout; throws if the engine thread failed or the engine is closed with work pending.
     */
    public boolean awaitIdle(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (progress) {
            while (completed < accepted) {
                checkAlive();
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(progress, left);
            }
            return true;
        }
    }

    /**
     * Waits until at least {@code n} subscriptions have reached the publisher since start (counted over restarts).
     * A JeroMQ SUB sends its subscription, also after reconnecting to a restarted engine, only while its own thread
     * processes commands (any recv, or {@code getEvents()}); a subscriber that sits idle is never counted.
     */
    public boolean awaitSubscribers(long n, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (subscriptions < n) {
            checkAlive();
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }

    /** The truth: every block this rank holds now, in every tier. Exact once {@link #awaitIdle} returned true. */
    public Set<HeldBlock> held() {
        return model.held();
    }

    public int heldDeviceBlocks() {
        return model.deviceBlocks();
    }

    public int heldHostBlocks() {
        return model.hostBlocks();
    }

    /** Restarts so far; 0 for the first process. */
    public int generation() {
        return generation;
    }

    /** Batches of the current process, which is also the next seq it will publish. */
    public long generationBatches() {
        return generationBatches;
    }

    /** Batches over all generations, dropped ones included. */
    public long totalBatches() {
        return totalBatches;
    }

    /** Batches that skipped the live send (they were still buffered for replay). */
    public long droppedBatches() {
        return droppedBatches;
    }

    /** The schedule deciding live drops in generation {@code gen}. */
    public DropSchedule dropSchedule(int gen) {
        return new DropSchedule(config.processSeed(gen), config.dropRate());
    }

    public long subscriptions() {
        return subscriptions;
    }

    public long replaysServed() {
        return replaysServed;
    }

    /**
     * Batches sent in answer to replay requests, over all generations: a replay that finds nothing after its start
     * counts in {@link #replaysServed()} but adds nothing here.
     */
    public long replayedBatches() {
        return replayedBatches;
    }

    /** Replay requests ignored without reply because they were not exactly 3 frames with an 8-byte seq. */
    public long replaysIgnored() {
        return replaysIgnored;
    }

    /** Stops the engine thread, which closes its sockets; returns when it has. Idempotent. */
    @Override
    public void close() {
        running = false;
        if (thread.isAlive() && Thread.currentThread() != thread) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (progress) {
            progress.notifyAll();
        }
    }

    private void enqueue(Command c) {
        checkAlive();
        synchronized (progress) {
            accepted++;
        }
        try {
            queue.put(c);
        } catch (InterruptedException e) {
            synchronized (progress) {
                accepted--;
                progress.notifyAll();
            }
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while queueing", e);
        }
    }

    private void checkAlive() {
        if (failure != null) {
            throw new IllegalStateException("engine " + thread.getName() + " failed", failure);
        }
        if (!running) {
            throw new IllegalStateException("engine " + thread.getName() + " is closed");
        }
    }

    // ---- engine thread ----

    private void run() {
        try {
            openProcess();
            bound.complete(null);
            while (running) {
                int work = 0;
                Command c;
                while (work < COMMANDS_PER_TURN && (c = queue.poll()) != null) {
                    execute(c);
                    work++;
                }
                work += serveReplays();
                drainSubscriptions();
                if (work == 0) {
                    // Idle: sleep on the sockets; a queued request waits at most this long.
                    poller.poll(1);
                }
            }
        } catch (Throwable t) {
            failure = t;
            bound.completeExceptionally(t);
            LOG.error("simulated engine {} failed", thread.getName(), t);
        } finally {
            closeProcess();
            for (Command c; (c = queue.poll()) != null; ) {
                if (c instanceof Restart r) {
                    r.done().completeExceptionally(new IllegalStateException("engine closed"));
                }
            }
            synchronized (progress) {
                progress.notifyAll();
            }
        }
    }

    private void execute(Command c) {
        if (c instanceof Request request) {
            publish(request.tokens());
        } else if (c instanceof Restart r) {
            closeProcess();
            model.clear();
            buffer.clear();
            generationBatches = 0;
            generation++;
            openProcess();
            LOG.info("simulated engine {} restarted (generation {})", thread.getName(), generation);
            r.done().complete(null);
        }
        synchronized (progress) {
            completed++;
            progress.notifyAll();
        }
    }

    private void publish(int[] promptTokens) {
        BlockChain chain = config.hashKind().chain(promptTokens, config.blockSize(), processSeed);
        List<EngineEvent> events = model.admit(chain);
        byte[] payload =
                BatchEncoder.batch(config.format(), System.currentTimeMillis() / 1000.0, events, config.dpRank());
        long seq = generationBatches;
        buffer.append(seq, payload);
        if (drops.drops(seq)) {
            droppedBatches++;
        } else {
            pub.send(topic, ZMQ.SNDMORE);
            pub.send(LiveFrames.seqFrame(seq), ZMQ.SNDMORE);
            pub.send(payload, 0);
        }
        generationBatches = seq + 1;
        totalBatches++;
    }

    private int serveReplays() {
        int served = 0;
        byte[] first;
        while ((first = router.recv(ZMQ.DONTWAIT)) != null) {
            List<byte[]> frames = new ArrayList<>(3);
            frames.add(first);
            while (router.hasReceiveMore()) {
                frames.add(router.recv(0));
            }
            served++;
            // vLLM answers only [identity, "", be64(start)]; anything else is ignored without a reply.
            if (frames.size() != 3 || frames.get(2).length != Long.BYTES) {
                replaysIgnored++;
                LOG.debug("{} ignored a replay request of {} frames", thread.getName(), frames.size());
                continue;
            }
            byte[] identity = frames.get(0);
            for (ReplayBuffer.Entry e : buffer.from(be64(frames.get(2)))) {
                reply(identity, topic, LiveFrames.seqFrame(e.seq()), e.payload());
                replayedBatches++;
            }
            reply(identity, EMPTY, SENTINEL_SEQ, EMPTY);
            replaysServed++;
        }
        return served;
    }

    private void reply(byte[] identity, byte[] topicFrame, byte[] seqFrame, byte[] payload) {
        router.send(identity, ZMQ.SNDMORE);
        router.send(EMPTY, ZMQ.SNDMORE);
        if (config.replayStyle() == ReplayStyle.FOUR_FRAME) {
            router.send(topicFrame, ZMQ.SNDMORE);
        }
        router.send(seqFrame, ZMQ.SNDMORE);
        router.send(payload, 0);
    }

    private void drainSubscriptions() {
        byte[] msg;
        while ((msg = pub.recv(ZMQ.DONTWAIT)) != null) {
            if (msg.length > 0 && msg[0] == 1) {
                subscriptions++;
            }
        }
    }

    private void openProcess() {
        processSeed = config.processSeed(generation);
        drops = dropSchedule(generation);
        ctx = new ZContext(1);
        pub = ctx.createSocket(SocketType.XPUB);
        pub.setLinger(0);
        pub.setSndHWM(HWM);
        pub.setXpubVerbose(true);
        livePort = bind(pub, livePort);
        router = ctx.createSocket(SocketType.ROUTER);
        router.setLinger(0);
        // A full replay is 10,001 messages; the default HWM of 1000 would silently drop most of them.
        router.setSndHWM(HWM);
        replayPort = bind(router, replayPort);
        poller = ctx.createPoller(2);
        poller.register(pub, ZMQ.Poller.POLLIN);
        poller.register(router, ZMQ.Poller.POLLIN);
    }

    /** Binds, retrying while a previous generation's listener still holds the port; returns the bound port. */
    private int bind(ZMQ.Socket socket, int port) {
        String address = "tcp://" + config.bindHost() + ":" + port;
        long deadline = System.currentTimeMillis() + BIND_RETRY_MS;
        while (true) {
            try {
                socket.bind(address);
                String last = socket.getLastEndpoint();
                return Integer.parseInt(last.substring(last.lastIndexOf(':') + 1));
            } catch (ZMQException e) {
                if (port == 0 || System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("cannot bind " + address + ": " + e.getMessage(), e);
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted binding " + address, ie);
                }
            }
        }
    }

    private void closeProcess() {
        if (ctx == null) {
            return;
        }
        if (poller != null) {
            poller.close();
        }
        // ZContext.close closes the sockets and waits for the context to terminate, which releases the ports.
        ctx.close();
        ctx = null;
        pub = null;
        router = null;
        poller = null;
    }

    private static long be64(byte[] b) {
        long v = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            v = (v << 8) | (b[i] & 0xffL);
        }
        return v;
    }

    private interface Command {}

    private record Request(int[] tokens) implements Command {}

    private record Restart(CompletableFuture<Void> done) implements Command {}
}

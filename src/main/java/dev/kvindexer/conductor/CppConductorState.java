package dev.kvindexer.conductor;

import dev.kvindexer.conductor.event.CppConductorEvent;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.HashProfile;
import dev.kvindexer.hash.VllmBlockHasher;
import dev.kvindexer.index.BlockKeyIndex;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What the C++ Mooncake Conductor knows (docs/api/mooncake-cpp.md, docs/protocol/index.md#conductor-context-index): its registrations by service key, its contexts (tenant,
 * model, LoRA, block size) each bound for good to the hash profile of its first engine and holding a
 * {@link BlockKeyIndex}, and the Store objects bound to their blocks. Registering, events, unregistering and queries
 * follow the reference's rules. Plain Java; {@link CppConductor} owns it and makes the changes one at a time, while
 * {@link #query} may run on several threads at once between them.
 */
public final class CppConductorState {
    /**
     * The order of the reference's {@code std::map<std::string>}: by the ids' UTF-8 bytes, which is their code points'
     * order ({@link String#compareTo} compares UTF-16 units and puts U+10000 and above before U+E000..U+FFFF).
     */
    static final Comparator<String> BYTE_ORDER = CppConductorState::compareCodePoints;

    /** A context's identity: the exact 4-tuple a query must name to reach it. */
    public record ContextKey(String tenantId, String model, String lora, long blockSize) {}

    /** What one Store object is bound to, so its removal finds the block it stood for. */
    private record Binding(ContextKey context, long key, String blockHash) {}

    /** A Store object's identity within its registration: (backend, tenant, object key, tier). */
    private record ObjectId(String backendId, String tenantId, String objectKey, StorageTier tier) {}

    private static final class Context {
        final ContextKey key;
        final HashProfile profile;
        /** A hasher keeps its digest and buffers: one for each thread that queries. */
        final ThreadLocal<VllmBlockHasher> hashers;

        final BlockKeyIndex index = new BlockKeyIndex();
        /**
         * instance id → registered rank → its owner in {@link #index}, both in order, for answers and
         * /global_view.
         */
        final TreeMap<String, TreeMap<Integer, Integer>> ranks = new TreeMap<>(BYTE_ORDER);
        /** {@link #ranks} as a query reads it; replaced whenever they change. */
        Layout layout = Layout.EMPTY;

        Context(ContextKey key, HashProfile profile) {
            this.key = key;
            this.profile = profile;
            this.hashers = ThreadLocal.withInitial(() -> new VllmBlockHasher(profile));
        }
    }

    private static final class Service {
        final CppConductorRegistration registration;
        final int owner;
        final Map<ObjectId, Binding> bindings = new HashMap<>();
        /** Whether this registration created its context, which {@link #withdraw} then removes with it. */
        final boolean createdContext;

        Service(CppConductorRegistration registration, int owner, boolean createdContext) {
            this.registration = registration;
            this.owner = owner;
            this.createdContext = createdContext;
        }
    }

    /** What a registration did. */
    public sealed interface Registered permits Added, Unchanged, Refused {}

    /** A new registration: its listener must be started. */
    public record Added(CppConductorRegistration registration) implements Registered {}

    /** The same registration was active already: nothing to start. */
    public record Unchanged() implements Registered {}

    /** Refused with the reference's {@code invalid_registration} text; nothing changed. */
    public record Refused(String error) implements Registered {}

    /** One context as /global_view lists it. */
    public record ContextView(
            ContextKey key, HashProfile profile, int prefixCount, Map<String, List<Integer>> instances) {}

    /**
     * A context's instances and their registered ranks in answer order (instance ids, then ranks, ascending), each
     * entry with its owner in the context's index and the UTF-8 forms an answer writes. Built again whenever a rank
     * registers or leaves, so a query reads it as it is instead of building maps and strings.
     */
    public static final class Layout {
        static final Layout EMPTY = new Layout(new TreeMap<>(BYTE_ORDER));

        private final String[] instances;
        private final byte[][] instanceUtf8;
        /** Instance {@code i}'s entries are {@code firstEntry[i] .. firstEntry[i + 1] - 1}. */
        private final int[] firstEntry;

        private final int[] ranks;
        private final byte[][] rankUtf8;
        private final int[] owners;

        private Layout(TreeMap<String, ? extends SortedMap<Integer, Integer>> byInstance) {
            int entries = 0;
            for (Map<Integer, Integer> r : byInstance.values()) {
                entries += r.size();
            }
            instances = byInstance.keySet().toArray(new String[0]);
            instanceUtf8 = new byte[instances.length][];
            firstEntry = new int[instances.length + 1];
            ranks = new int[entries];
            rankUtf8 = new byte[entries][];
            owners = new int[entries];
            int i = 0;
            int e = 0;
            for (Map.Entry<String, ? extends SortedMap<Integer, Integer>> instance : byInstance.entrySet()) {
                instanceUtf8[i] = instance.getKey().getBytes(StandardCharsets.UTF_8);
                firstEntry[i++] = e;
                for (Map.Entry<Integer, Integer> rank : instance.getValue().entrySet()) {
                    ranks[e] = rank.getKey();
                    rankUtf8[e] = Integer.toString(rank.getKey()).getBytes(StandardCharsets.UTF_8);
                    owners[e++] = rank.getValue();
                }
            }
            firstEntry[i] = e;
        }

        public int instanceCount() {
            return instances.length;
        }

        public String instance(int i) {
            return instances[i];
        }

        /** Shared by every answer: read only. */
        public byte[] instanceUtf8(int i) {
            return instanceUtf8[i];
        }

        public int firstEntry(int instance) {
            return firstEntry[instance];
        }

        public int rank(int entry) {
            return ranks[entry];
        }

        /** The rank's decimal form, as the answer's keys name it; shared by every answer: read only. */
        public byte[] rankUtf8(int entry) {
            return rankUtf8[entry];
        }

        /** The instance's place in the order, or negative when it has no rank registered. */
        int indexOf(String instanceId) {
            return Arrays.binarySearch(instances, instanceId, BYTE_ORDER);
        }
    }

    /**
     * Instances {@code from .. to - 1} of {@code layout} and the blocks each of their entries matched through GPU, CPU
     * and disk: three per entry in {@code reach}, from the first entry of {@code from}.
     */
    public record Matches(Layout layout, int from, int to, int[] reach) {
        static final Matches NONE = new Matches(Layout.EMPTY, 0, 0, new int[0]);

        /** Matches given per instance and rank (owners unknown, as none was walked): for answers built elsewhere. */
        public static Matches of(Map<String, Map<Integer, int[]>> instances) {
            TreeMap<String, TreeMap<Integer, Integer>> byInstance = new TreeMap<>(BYTE_ORDER);
            instances.forEach((instance, ranks) -> {
                TreeMap<Integer, Integer> owners = new TreeMap<>();
                ranks.keySet().forEach(rank -> owners.put(rank, 0));
                byInstance.put(instance, owners);
            });
            Layout layout = new Layout(byInstance);
            int[] reach = new int[3 * layout.firstEntry(layout.instanceCount())];
            for (int i = 0; i < layout.instanceCount(); i++) {
                Map<Integer, int[]> ranks = instances.get(layout.instance(i));
                for (int e = layout.firstEntry(i); e < layout.firstEntry(i + 1); e++) {
                    System.arraycopy(ranks.get(layout.rank(e)), 0, reach, 3 * e, 3);
                }
            }
            return new Matches(layout, 0, layout.instanceCount(), reach);
        }

        /** Per instance (in order), per rank (in order), blocks matched through GPU, CPU and disk. */
        public Map<String, Map<Integer, int[]>> instances() {
            Map<String, Map<Integer, int[]>> out = new TreeMap<>(BYTE_ORDER);
            int base = layout.firstEntry(from);
            for (int i = from; i < to; i++) {
                Map<Integer, int[]> ranks = new TreeMap<>();
                for (int e = layout.firstEntry(i); e < layout.firstEntry(i + 1); e++) {
                    int r = 3 * (e - base);
                    ranks.put(layout.rank(e), new int[] {reach[r], reach[r + 1], reach[r + 2]});
                }
                out.put(layout.instance(i), ranks);
            }
            return out;
        }
    }

    private final Map<ContextKey, Context> contexts = new LinkedHashMap<>();
    private final TreeMap<String, Service> services = new TreeMap<>(BYTE_ORDER);
    private int nextOwner;

    public Registered register(CppConductorRegistration r) {
        Registered decided = decide(r);
        if (decided != null) {
            return decided;
        }
        Context context = contexts.get(r.context());
        boolean created = false;
        if (r.engine()) {
            if (context == null) {
                context = new Context(r.context(), r.profile());
                contexts.put(r.context(), context);
                created = true;
            }
            context.ranks.computeIfAbsent(r.instanceId(), i -> new TreeMap<>()).put(r.dpRank(), nextOwner);
            context.layout = new Layout(context.ranks);
        }
        services.put(r.serviceKey(), new Service(r, nextOwner++, created));
        return new Added(r);
    }

    /**
     * What registering {@code r} would answer without changing anything: {@link Unchanged}, a {@link Refused}, or null
     * when it would be added. So a registration that must fail for another reason still gets the reference's answer
     * to its conflicts first.
     */
    public Registered decide(CppConductorRegistration r) {
        String key = r.serviceKey();
        Service existing = services.get(key);
        if (existing != null) {
            return existing.registration.equals(r)
                    ? new Unchanged()
                    : new Refused("conflicting registration for service key: " + key);
        }
        for (Service s : services.values()) {
            if (s.registration.endpoint().equals(r.endpoint())) {
                return new Refused("conflicting active registration for endpoint: " + r.endpoint());
            }
        }
        Context context = contexts.get(r.context());
        if (context != null && !context.profile.equals(r.profile())) {
            return new Refused(
                    r.engine()
                            ? "failed to register prefix context: registration conflicts with the ContextKey hash profile"
                            : "failed to bind shared-cache profile: hash profile conflicts with the registered ContextKey profile");
        }
        return null;
    }

    /**
     * Undoes a registration whose subscription could not start, the context it created included when nothing else
     * has joined it since: a refused request leaves no trace, although the reference keeps every context it created.
     */
    public void withdraw(String serviceKey) {
        Service s = services.get(serviceKey);
        if (s == null) {
            return;
        }
        unregister(serviceKey);
        Context context = contexts.get(s.registration.context());
        if (s.createdContext && context != null && context.ranks.isEmpty() && context.index.keyCount() == 0) {
            contexts.remove(s.registration.context());
        }
    }

    /** Ends a registration and drops what it contributed; null when no such service key is registered. */
    public CppConductorRegistration unregister(String serviceKey) {
        Service s = services.remove(serviceKey);
        if (s == null) {
            return null;
        }
        CppConductorRegistration r = s.registration;
        if (r.engine()) {
            Context context = contexts.get(r.context());
            context.index.clearGpu(s.owner);
            TreeMap<Integer, Integer> ranks = context.ranks.get(r.instanceId());
            ranks.remove(r.dpRank());
            if (ranks.isEmpty()) {
                context.ranks.remove(r.instanceId());
            }
            context.layout = new Layout(context.ranks);
        } else {
            s.bindings.forEach((id, b) -> unbind(id, b));
        }
        return r;
    }

    /** Applies one checked event of a registration; returns why it was refused, or null. */
    public String apply(String serviceKey, CppConductorEvent event) {
        Service s = services.get(serviceKey);
        if (s == null) {
            return "no registration " + serviceKey;
        }
        if (s.registration.engine()) {
            BlockKeyIndex index = contexts.get(s.registration.context()).index;
            if (event instanceof CppConductorEvent.GpuStored stored) {
                for (long k : stored.keys()) {
                    index.storeGpu(s.owner, k);
                }
            } else if (event instanceof CppConductorEvent.GpuRemoved removed) {
                for (long k : removed.keys()) {
                    index.removeGpu(s.owner, k);
                }
            } else if (event instanceof CppConductorEvent.GpuCleared) {
                index.clearGpu(s.owner);
            } else {
                return "an engine registration publishes no Store objects";
            }
            return null;
        }
        if (event instanceof CppConductorEvent.ObjectStored stored) {
            return bind(s, stored);
        } else if (event instanceof CppConductorEvent.ObjectRemoved removed) {
            return release(s, removed);
        } else if (event instanceof CppConductorEvent.ObjectsCleared cleared) {
            Iterator<Map.Entry<ObjectId, Binding>> it = s.bindings.entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<ObjectId, Binding> e = it.next();
                if (e.getKey().backendId().equals(cleared.backendId())
                        && e.getKey().tenantId().equals(cleared.tenantId())) {
                    unbind(e.getKey(), e.getValue());
                    it.remove();
                }
            }
            return null;
        }
        return "a Store registration publishes no GPU blocks";
    }

    private String bind(Service s, CppConductorEvent.ObjectStored e) {
        ContextKey key = new ContextKey(e.tenantId(), e.modelName(), e.loraName(), e.blockSize());
        Context context = contexts.get(key);
        if (context == null) {
            return "Mooncake profile binding rejected: ContextKey is not registered";
        }
        if (!context.profile.equals(s.registration.profile())) {
            return "Mooncake profile binding rejected: hash profile conflicts with the registered ContextKey profile";
        }
        ObjectId id = new ObjectId(e.backendId(), e.tenantId(), e.objectKey(), e.tier());
        Binding binding = new Binding(key, e.key(), e.blockHash());
        Binding before = s.bindings.get(id);
        if (before != null) {
            return before.equals(binding) ? null : "object " + e.objectKey() + " is bound to another block already";
        }
        s.bindings.put(id, binding);
        context.index.addShared(e.tier(), e.key());
        return null;
    }

    private String release(Service s, CppConductorEvent.ObjectRemoved e) {
        ObjectId id = new ObjectId(e.backendId(), e.tenantId(), e.objectKey(), e.tier());
        Binding b = s.bindings.get(id);
        if (b == null) {
            return null;
        }
        ContextKey c = b.context();
        long[] seq = e.seqHashes();
        boolean agrees = (e.modelName() == null || e.modelName().equals(c.model()))
                && (e.loraName() == null ? "" : e.loraName()).equals(c.lora())
                && (e.blockSize() == null || e.blockSize() == c.blockSize())
                && (e.blockHash() == null || e.blockHash().equals(b.blockHash()))
                && (seq.length == 0 || (seq.length == 1 && seq[0] == b.key()));
        if (!agrees) {
            return "removal of " + e.objectKey() + " does not match its stored binding";
        }
        s.bindings.remove(id);
        unbind(id, b);
        return null;
    }

    private void unbind(ObjectId id, Binding b) {
        Context context = contexts.get(b.context());
        if (context != null) {
            context.index.removeShared(id.tier(), b.key());
        }
    }

    /**
     * The Conductor query (docs/protocol/index.md#conductor-context-index): the prompt's complete blocks hashed with
     * the context's profile, walked GPU → CPU → disk for every
     * registered rank of every (or the one named) instance. An unknown context or instance matches nothing. Only
     * reads: queries may run on several threads at once, never beside a change.
     */
    public Matches query(ContextKey key, String instanceId, int[] tokens, String cacheSalt) {
        Context context = contexts.get(key);
        if (context == null) {
            return Matches.NONE;
        }
        Layout layout = context.layout;
        int from = 0;
        int to = layout.instanceCount();
        if (instanceId != null) {
            from = layout.indexOf(instanceId);
            if (from < 0) {
                return Matches.NONE;
            }
            to = from + 1;
        }
        if (from == to) {
            return new Matches(layout, from, to, new int[0]);
        }
        int first = layout.firstEntry(from);
        int end = layout.firstEntry(to);
        // The walk only reads its owners: a query of every instance walks the layout's own column.
        int[] owners = first == 0 && end == layout.owners.length
                ? layout.owners
                : Arrays.copyOfRange(layout.owners, first, end);
        int blockSize = (int) Math.min(key.blockSize(), Integer.MAX_VALUE);
        VllmBlockHasher.Chain chain = context.hashers.get().chain(tokens, blockSize, key.lora(), cacheSalt);
        int[] out = new int[3 * owners.length];
        context.index.walk(
                new BlockKeyIndex.PromptKeys() {
                    @Override
                    public int blocks() {
                        return chain.blocks();
                    }

                    @Override
                    public long key(int i) {
                        return chain.nextKey();
                    }
                },
                owners,
                out);
        return new Matches(layout, from, to, out);
    }

    /** Every active registration, by service key. */
    public List<CppConductorRegistration> services() {
        List<CppConductorRegistration> out = new ArrayList<>();
        services.values().forEach(s -> out.add(s.registration));
        return out;
    }

    /** Every context, including those whose last rank has gone: the reference never deletes one. */
    public List<ContextView> contexts() {
        List<ContextView> out = new ArrayList<>();
        for (Context c : contexts.values()) {
            Map<String, List<Integer>> instances = new TreeMap<>(BYTE_ORDER);
            c.ranks.forEach((instance, ranks) -> instances.put(instance, List.copyOf(ranks.keySet())));
            out.add(new ContextView(c.key, c.profile, c.index.keyCount(), instances));
        }
        return out;
    }

    private static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    /** Test access: whether the registration is active. */
    boolean active(String serviceKey) {
        return services.containsKey(serviceKey);
    }
}

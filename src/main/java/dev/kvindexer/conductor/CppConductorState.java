package dev.kvindexer.conductor;

import dev.kvindexer.conductor.event.CppConductorEvent;
import dev.kvindexer.event.StorageTier;
import dev.kvindexer.hash.HashProfile;
import dev.kvindexer.hash.VllmBlockHasher;
import dev.kvindexer.index.BlockKeyIndex;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the C++ Mooncake Conductor knows (docs/api/mooncake-cpp.md, docs/protocol/index.md#conductor-context-index): its registrations by service key, its contexts (tenant,
 * model, LoRA, block size) each bound for good to the hash profile of its first engine and holding a
 * {@link BlockKeyIndex}, and the Store objects bound to their blocks. Registering, events, unregistering and queries
 * follow the reference's rules. Plain Java; {@link CppConductor} owns it and makes the changes one at a time, while
 * {@link #query} may run on several threads at once between them.
 */
public final class CppConductorState {
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
        final TreeMap<String, TreeMap<Integer, Integer>> ranks = new TreeMap<>();

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

    /** Per instance (in order), per rank (in order), blocks matched through GPU, CPU and disk. */
    public record Matches(Map<String, Map<Integer, int[]>> instances) {}

    private final Map<ContextKey, Context> contexts = new LinkedHashMap<>();
    private final TreeMap<String, Service> services = new TreeMap<>();
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
        boolean agrees = (e.modelName() == null || e.modelName().equals(c.model()))
                && (e.loraName() == null || e.loraName().equals(c.lora()))
                && (e.blockSize() == null || e.blockSize() == c.blockSize())
                && (e.key() == null || e.key() == b.key());
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
        if (context == null || (instanceId != null && !context.ranks.containsKey(instanceId))) {
            return new Matches(Map.of());
        }
        Map<String, TreeMap<Integer, Integer>> selected =
                instanceId == null ? context.ranks : Map.of(instanceId, context.ranks.get(instanceId));
        int count = 0;
        for (TreeMap<Integer, Integer> ranks : selected.values()) {
            count += ranks.size();
        }
        int[] owners = new int[count];
        int at = 0;
        for (TreeMap<Integer, Integer> ranks : selected.values()) {
            for (int owner : ranks.values()) {
                owners[at++] = owner;
            }
        }
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
        Map<String, Map<Integer, int[]>> result = new TreeMap<>();
        int o = 0;
        for (Map.Entry<String, TreeMap<Integer, Integer>> e : selected.entrySet()) {
            Map<Integer, int[]> ranks = new TreeMap<>();
            for (int rank : e.getValue().keySet()) {
                ranks.put(rank, new int[] {out[3 * o], out[3 * o + 1], out[3 * o + 2]});
                o++;
            }
            result.put(e.getKey(), ranks);
        }
        return new Matches(result);
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
            Map<String, List<Integer>> instances = new TreeMap<>();
            c.ranks.forEach((instance, ranks) -> instances.put(instance, List.copyOf(ranks.keySet())));
            out.add(new ContextView(c.key, c.profile, c.index.keyCount(), instances));
        }
        return out;
    }

    /** Test access: whether the registration is active. */
    boolean active(String serviceKey) {
        return services.containsKey(serviceKey);
    }
}

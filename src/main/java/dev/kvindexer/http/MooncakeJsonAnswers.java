package dev.kvindexer.http;

import dev.kvindexer.index.OwnerMatch;
import dev.kvindexer.index.TierBreakdown;
import dev.kvindexer.ingest.Listener;
import dev.kvindexer.partition.QueryResult;
import dev.kvindexer.query.IndexQueries;
import dev.kvindexer.registry.InstanceIds;
import dev.kvindexer.registry.Registry;
import io.vertx.core.json.Json;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Renders the Mooncake JSON flavor's answers (docs/api/mooncake-json.md#post-query): every registered engine instance of the partition with every
 * registered rank, zeros included, named by its Mooncake string id; shared stores are never listed. Numbers are the
 * same cumulative walk as the Dynamo flavor's {@code instances}, in tokens.
 */
final class MooncakeJsonAnswers {
    private MooncakeJsonAnswers() {}

    /**
     * @param members  the partition's registered instances
     * @param only     the instance id to restrict the answer to, or null for all
     * @param onlyName how the request named {@code only}: the Go Conductor answers one row for it, all zeros with
     *                 no ranks when it is not registered
     * @param reply    the partition's matches; a registered rank without one has the shared stores' reach
     */
    static String render(
            Flavor shape,
            String routingGroup,
            List<Registry.Member> members,
            Long only,
            String onlyName,
            QueryResult reply) {
        int blockSize = reply.blockSize();
        Map<Long, String> names = new HashMap<>();
        List<OwnerMatch> owners = registeredRanks(members, only, reply, names);
        TierBreakdown breakdown = TierBreakdown.of(owners, blockSize);
        boolean cpp = shape == Flavor.MOONCAKE_JSON_INSTANCES;
        StringBuilder sb = new StringBuilder(64 + owners.size() * 96);
        openAnswer(sb, shape, routingGroup);
        List<TierBreakdown.InstanceBreakdown> instances = breakdown.instances();
        if (only != null && instances.isEmpty()) {
            sb.append(Json.encode(onlyName))
                    .append(
                            cpp
                                    ? ":{\"longest_matched\":0,\"gpu\":0,\"dp\":{},\"cpu\":0,\"disk\":0,\"rank_matches\":{}}"
                                    : ":{\"longest_matched\":0,\"GPU\":0,\"DP\":{},\"CPU\":0,\"DISK\":0}");
        }
        for (int i = 0; i < instances.size(); i++) {
            TierBreakdown.InstanceBreakdown b = instances.get(i);
            sb.append(i == 0 ? "" : ",");
            appendInstance(sb, b, names.get(b.workerId()), cpp, owners, blockSize);
        }
        return sb.append("}}").toString();
    }

    /**
     * The matches of every registered rank of the instances the answer lists, the shared stores' reach where a rank
     * has none, and ranks nobody registered that hold blocks; puts each listed instance's display id into
     * {@code names}.
     */
    private static List<OwnerMatch> registeredRanks(
            List<Registry.Member> members, Long only, QueryResult reply, Map<Long, String> names) {
        List<OwnerMatch> owners = new ArrayList<>();
        Map<Long, Map<Integer, OwnerMatch>> byOwner = new HashMap<>();
        for (OwnerMatch m : reply.matches()) {
            byOwner.computeIfAbsent(m.workerId(), k -> new HashMap<>()).put(m.dpRank(), m);
        }
        for (Registry.Member member : members) {
            if (member.store() || (only != null && member.workerId() != only)) {
                continue;
            }
            long id = member.workerId();
            names.put(id, InstanceIds.display(id, member.name()));
            Map<Integer, OwnerMatch> matched = byOwner.getOrDefault(id, Map.of());
            for (int rank : member.dpRanks()) {
                owners.add(matched.getOrDefault(rank, IndexQueries.sharedOnly(id, rank, reply)));
            }
            // A rank the engine's batches named but nobody registered still holds blocks of this instance.
            matched.forEach((rank, m) -> {
                if (java.util.Arrays.binarySearch(member.dpRanks(), rank) < 0) {
                    owners.add(m);
                }
            });
        }
        return owners;
    }

    /** The answer's outer object, up to its first instance: keyed by the flavor's name or by the routing group. */
    private static void openAnswer(StringBuilder sb, Flavor shape, String routingGroup) {
        switch (shape) {
            case MOONCAKE_JSON_DATA -> sb.append("{\"data\":{");
            case MOONCAKE_JSON_INSTANCES -> sb.append("{\"instances\":{");
            default -> sb.append('{').append(Json.encode(routingGroup)).append(":{");
        }
    }

    /** One instance's entry under {@code name}; {@code cpp} writes the C++ Conductor's names and its rank matches. */
    private static void appendInstance(
            StringBuilder sb,
            TierBreakdown.InstanceBreakdown b,
            String name,
            boolean cpp,
            List<OwnerMatch> owners,
            int blockSize) {
        sb.append(Json.encode(name))
                .append(":{\"longest_matched\":")
                .append(b.longestMatched())
                .append(cpp ? ",\"gpu\":" : ",\"GPU\":")
                .append(b.gpu())
                .append(cpp ? ",\"dp\":{" : ",\"DP\":{");
        for (int r = 0; r < b.dpRanks().length; r++) {
            sb.append(r == 0 ? "" : ",")
                    .append('"')
                    .append(b.dpRanks()[r])
                    .append("\":")
                    .append(b.dpTokens()[r]);
        }
        sb.append(cpp ? "},\"cpu\":" : "},\"CPU\":")
                .append(b.cpu())
                .append(cpp ? ",\"disk\":" : ",\"DISK\":")
                .append(b.disk());
        if (cpp) {
            rankMatches(sb, b.workerId(), owners, blockSize);
        }
        sb.append('}');
    }

    /** The answer with no instance in it: the Go Conductor's to a tenant nobody registered under. */
    static String none(Flavor shape) {
        return switch (shape) {
            case MOONCAKE_JSON_DATA -> "{\"data\":{}}";
            case MOONCAKE_JSON_INSTANCES -> "{\"instances\":{}}";
            default -> "{}";
        };
    }

    /** {@code rank_matches[r] = {gpu, cpu, disk}} of one instance, in tokens, ranks ascending. */
    private static void rankMatches(StringBuilder sb, long workerId, List<OwnerMatch> owners, int blockSize) {
        List<OwnerMatch> mine = new ArrayList<>();
        for (OwnerMatch m : owners) {
            if (m.workerId() == workerId) {
                mine.add(m);
            }
        }
        mine.sort((a, b) -> Integer.compare(a.dpRank(), b.dpRank()));
        sb.append(",\"rank_matches\":{");
        for (int i = 0; i < mine.size(); i++) {
            OwnerMatch m = mine.get(i);
            sb.append(i == 0 ? "" : ",")
                    .append('"')
                    .append(m.dpRank())
                    .append("\":{\"gpu\":")
                    .append((long) m.gpuBlocks() * blockSize)
                    .append(",\"cpu\":")
                    .append((long) m.cpuBlocks() * blockSize)
                    .append(",\"disk\":")
                    .append((long) m.diskBlocks() * blockSize)
                    .append('}');
        }
        sb.append('}');
    }

    /**
     * GET /services in JSON, the Go Conductor's {@code {"count", "services"}}: one entry per registered rank, with
     * its capitalised members in its order and {@code ""} for what is absent; this API's registrations (Dynamo's as
     * {@code vLLM}, their id in decimal) then the plugged msgpack API's.
     */
    static String services(List<Registry.WorkerView> workers, List<MsgpackApi.ServiceRow> plugged) {
        List<MsgpackApi.ServiceRow> rows = new ArrayList<>();
        for (Registry.WorkerView w : workers) {
            for (Listener l : w.listeners()) {
                rows.add(new MsgpackApi.ServiceRow(
                        l.endpoint(),
                        l.replayEndpoint(),
                        l.publisher().type() != null ? l.publisher().type() : "vLLM",
                        w.key().modelName(),
                        l.publisher().defaultLora(),
                        w.key().routingGroup(),
                        InstanceIds.display(w.workerId(), w.name()),
                        w.blockSize(),
                        l.dpRank(),
                        l.publisher().additionalSalt()));
            }
        }
        rows.addAll(plugged);
        StringBuilder sb = new StringBuilder("{\"count\":").append(rows.size()).append(",\"services\":[");
        for (int i = 0; i < rows.size(); i++) {
            MsgpackApi.ServiceRow r = rows.get(i);
            sb.append(i == 0 ? "{\"Endpoint\":" : ",{\"Endpoint\":")
                    .append(Json.encode(orEmpty(r.endpoint())))
                    .append(",\"ReplayEndpoint\":")
                    .append(Json.encode(orEmpty(r.replayEndpoint())))
                    .append(",\"Type\":")
                    .append(Json.encode(orEmpty(r.type())))
                    .append(",\"ModelName\":")
                    .append(Json.encode(orEmpty(r.modelName())))
                    .append(",\"LoraName\":")
                    .append(Json.encode(orEmpty(r.loraName())))
                    .append(",\"TenantID\":")
                    .append(Json.encode(orEmpty(r.tenantId())))
                    .append(",\"InstanceID\":")
                    .append(Json.encode(orEmpty(r.instanceId())))
                    .append(",\"BlockSize\":")
                    .append(r.blockSize())
                    .append(",\"DPRank\":")
                    .append(r.dpRank())
                    .append(",\"AdditionalSalt\":")
                    .append(Json.encode(orEmpty(r.additionalSalt())))
                    .append('}');
        }
        return sb.append("]}").toString();
    }

    private static String orEmpty(String s) {
        return s == null ? "" : s;
    }
}

package dev.kvindexer.cluster;

import dev.kvindexer.event.WorkerRank;
import dev.kvindexer.metrics.ClusterCounters;
import dev.kvindexer.registry.InstanceIds;
import dev.kvindexer.registry.RegisterRequest;
import dev.kvindexer.registry.RegistrationJson;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What nodes tell each other through cluster maps and the event bus, written and read back. Whoever reaches the
 * cluster port can write there, so every value read is checked as an HTTP body would be (types, sizes, endpoints,
 * block size, URLs, key format) and, when the cluster shares an auth token, must carry that token's signature. A value
 * that fails is ignored by the caller: the reason is counted, and logged once per source and reason.
 */
public final class ClusterValues {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterValues.class);

    /** Where a value came from (the {@code source} label of the rejection counter). */
    public static final String REGISTRATIONS = "registrations";

    public static final String TOMBSTONES = "tombstones";
    public static final String MEMBERS = "members";
    public static final String ANNOUNCEMENTS = "announcements";
    /** Why it was ignored (the {@code reason} label). */
    public static final String INVALID = "invalid";

    public static final String UNSIGNED = "unsigned";
    public static final String BAD_SIGNATURE = "bad_signature";

    /** Far above any registration (endpoints and names are short), far below anything that could hurt to parse. */
    static final int MAX_VALUE_CHARS = 64 * 1024;

    static final int MAX_URL_CHARS = 2048;
    private static final String SIG = "sig";
    private static final Pattern REGISTRATION_KEY = Pattern.compile("(0|[1-9][0-9]{0,19}):(0|[1-9][0-9]{0,9})");
    private static final Pattern NODE_ID = Pattern.compile("[0-9A-Za-z-]{1,64}");

    private final ValueSigner signer;
    private final ClusterCounters counters;
    private final RefusalLog log = new RefusalLog(LOG);

    /** @param authToken the cluster's shared bearer token, or null: values are then neither signed nor checked for it */
    public ClusterValues(String authToken, ClusterCounters counters) {
        this.signer = new ValueSigner(authToken);
        this.counters = counters;
    }

    /** A node's entry in the member map: where its HTTP API is, and whether it finished its own recovery. */
    public record Member(String url, boolean ready) {}

    /** Thrown inside this class when a value fails a check; the caller sees null or false instead. */
    private static final class Refused extends Exception {
        Refused(String message) {
            super(message, null, false, false);
        }
    }

    static String key(long workerId, int dpRank) {
        return new WorkerRank(workerId, dpRank).toString();
    }

    /** The registration as stored under its key. */
    String registration(RegisterRequest r) {
        return seal(REGISTRATIONS, key(r.workerId(), r.dpRank()), canonical(r));
    }

    /** The registration stored under {@code key}, or null when the key or the value is refused. */
    RegisterRequest registration(String key, Object value) {
        try {
            WorkerRank k = parseKey(key);
            JsonObject o = parse(value);
            RegisterRequest r = decode(k, o);
            verify(REGISTRATIONS, key, canonical(r), o);
            return r;
        } catch (Refused e) {
            refuse(REGISTRATIONS, e, key);
            return null;
        }
    }

    /** The key of a registration, or null when refused. */
    WorkerRank registrationKey(String key, String source) {
        try {
            return parseKey(key);
        } catch (Refused e) {
            refuse(source, e, key);
            return null;
        }
    }

    /** The mark an unregistration leaves under the key it removed. */
    String tombstone(String key, long unregisteredAtMillis) {
        return seal(TOMBSTONES, key, new JsonObject().put("unregistered_at", unregisteredAtMillis));
    }

    /** Whether {@code value} is a valid tombstone of {@code key}; a refused one counts as none. */
    boolean tombstone(String key, Object value) {
        try {
            parseKey(key);
            JsonObject o = parse(value);
            long at = nonNegative(o, "unregistered_at", Long.MAX_VALUE);
            verify(TOMBSTONES, key, new JsonObject().put("unregistered_at", at), o);
            return true;
        } catch (Refused e) {
            refuse(TOMBSTONES, e, key);
            return false;
        }
    }

    /** The event-bus message that asks a node to reconcile {@code key}. */
    String announcement(String key) {
        return seal(ANNOUNCEMENTS, "", new JsonObject().put("key", key));
    }

    /** The key an announcement names, or null when it is refused. */
    String announced(Object body) {
        try {
            JsonObject o = parse(body);
            String key = string(o, "key", false);
            parseKey(key);
            verify(ANNOUNCEMENTS, "", new JsonObject().put("key", key), o);
            return key;
        } catch (Refused e) {
            refuse(ANNOUNCEMENTS, e, null);
            return null;
        }
    }

    /** A node's entry in the member map, under its cluster node id. */
    String member(String nodeId, String url, boolean ready) {
        return seal(MEMBERS, nodeId, new JsonObject().put("url", url).put("ready", ready));
    }

    /** The member entry of {@code nodeId}, or null when refused. */
    Member member(String nodeId, Object value) {
        try {
            if (nodeId == null || !NODE_ID.matcher(nodeId).matches()) {
                throw new Refused("malformed node id");
            }
            JsonObject o = parse(value);
            String url = httpUrl(string(o, "url", false));
            if (!(o.getValue("ready") instanceof Boolean ready)) {
                throw new Refused("`ready` must be a boolean");
            }
            verify(MEMBERS, nodeId, new JsonObject().put("url", url).put("ready", ready), o);
            return new Member(url, ready);
        } catch (Refused e) {
            refuse(MEMBERS, e, nodeId);
            return null;
        }
    }

    /** The stored form, field by field in a fixed order: these are also the bytes the signature covers. */
    static JsonObject canonical(RegisterRequest r) {
        return RegistrationJson.encode(r);
    }

    /** What /register would have accepted, and nothing that contradicts the key it is stored under. */
    private static RegisterRequest decode(WorkerRank k, JsonObject o) throws Refused {
        RegisterRequest r;
        try {
            r = RegistrationJson.decode(o);
        } catch (RegistrationJson.Invalid e) {
            throw new Refused(e.getMessage());
        }
        if (r.workerId() != k.workerId()) {
            throw new Refused("instance_id does not match the key");
        }
        if (r.dpRank() != k.dpRank()) {
            throw new Refused("dp_rank does not match the key");
        }
        return r;
    }

    private static WorkerRank parseKey(String key) throws Refused {
        if (key == null || !REGISTRATION_KEY.matcher(key).matches()) {
            throw new Refused("malformed registration key");
        }
        int colon = key.indexOf(':');
        String id = key.substring(0, colon);
        long rank = Long.parseLong(key.substring(colon + 1));
        if (!InstanceIds.isCanonicalDecimal(id) || rank > Integer.MAX_VALUE) {
            throw new Refused("registration key out of range");
        }
        return new WorkerRank(Long.parseUnsignedLong(id), (int) rank);
    }

    private static JsonObject parse(Object value) throws Refused {
        if (!(value instanceof String text)) {
            throw new Refused("not a string");
        }
        if (text.length() > MAX_VALUE_CHARS) {
            throw new Refused("longer than " + MAX_VALUE_CHARS + " characters");
        }
        try {
            return new JsonObject(text);
        } catch (DecodeException | ClassCastException e) {
            throw new Refused("not a JSON object");
        }
    }

    private static String string(JsonObject o, String field, boolean optional) throws Refused {
        try {
            return RegistrationJson.string(o, field, optional);
        } catch (RegistrationJson.Invalid e) {
            throw new Refused(e.getMessage());
        }
    }

    private static long nonNegative(JsonObject o, String field, long max) throws Refused {
        try {
            return RegistrationJson.nonNegative(o, field, max);
        } catch (RegistrationJson.Invalid e) {
            throw new Refused(e.getMessage());
        }
    }

    /** An absolute http(s) URL with a host and nothing a peer could smuggle into a request: no user, query or fragment. */
    private static String httpUrl(String url) throws Refused {
        if (url.length() > MAX_URL_CHARS) {
            throw new Refused("url longer than " + MAX_URL_CHARS + " characters");
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw new Refused("url does not parse");
        }
        String scheme = uri.getScheme();
        if (scheme == null
                || !(scheme.equals("http") || scheme.equals("https"))
                || uri.getHost() == null
                || uri.getRawUserInfo() != null
                || uri.getRawQuery() != null
                || uri.getRawFragment() != null
                || uri.getPort() == 0
                || uri.getPort() > 65535) {
            throw new Refused("url is not a plain http(s) URL of a host");
        }
        return url;
    }

    private String seal(String domain, String key, JsonObject canonical) {
        String sig = signer.sign(domain, key, canonical.encode());
        return (sig == null ? canonical : canonical.copy().put(SIG, sig)).encode();
    }

    private void verify(String domain, String key, JsonObject canonical, JsonObject stored) throws Refused {
        if (!signer.signs()) {
            return;
        }
        if (!(stored.getValue(SIG) instanceof String sig)) {
            throw new Refused(UNSIGNED);
        }
        if (!signer.verify(domain, key, canonical.encode(), sig)) {
            throw new Refused(BAD_SIGNATURE);
        }
    }

    private void refuse(String source, Refused e, String key) {
        String reason =
                e.getMessage().equals(UNSIGNED) || e.getMessage().equals(BAD_SIGNATURE) ? e.getMessage() : INVALID;
        counters.rejected(source, reason);
        String shown = key == null ? "" : " `" + (key.length() > 80 ? key.substring(0, 80) + "..." : key) + "`";
        log.refused(
                source + "|" + reason,
                "ignored a value from the cluster's {}{}: {} (counted in " + "kvindexer_cluster_values_rejected_total)",
                source,
                shown,
                e.getMessage());
    }
}

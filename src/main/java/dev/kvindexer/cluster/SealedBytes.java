package dev.kvindexer.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.core.HazelcastInstance;
import dev.kvindexer.metrics.ClusterCounters;
import java.security.MessageDigest;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opaque bytes one node stores in a cluster map or sends over the event bus for the others, sealed with the cluster's
 * auth token as registrations are signed: a mark, an HMAC-SHA256 of the token over the bytes, their kind and their
 * key, then the bytes. Under a token, bytes without the mark or with another seal are refused, counted in
 * {@code kvindexer_cluster_values_rejected_total} (the kind is the source) and logged; without a token nothing is
 * sealed and everything opens, as elsewhere in the cluster.
 *
 * <p>Every member holds one in its Hazelcast instance's user context, so code that Hazelcast runs on another member
 * (on a map entry's owner) seals and opens there with that member's token, which never travels.
 */
public final class SealedBytes {
    private static final Logger LOG = LoggerFactory.getLogger(SealedBytes.class);
    private static final String USER_CONTEXT_KEY = "kvindexer.sealedBytes";
    /** No encoding kvindexer stores starts with it (a record starts with a short string's length). */
    private static final byte MARK = (byte) 0xA5;

    private static final int MAC_BYTES = 32;
    private static final int HEAD = 1 + MAC_BYTES;

    private final ValueSigner signer;
    private final ClusterCounters counters;
    private final RefusalLog log = new RefusalLog(LOG);

    SealedBytes(String authToken, ClusterCounters counters) {
        this.signer = new ValueSigner(authToken);
        this.counters = counters;
    }

    /** Puts this member's sealer into {@code config}, for {@link #of}. */
    static void install(Config config, String authToken, ClusterCounters counters) {
        config.getUserContext().put(USER_CONTEXT_KEY, new SealedBytes(authToken, counters));
    }

    /** The sealer of {@code member}; a member kvindexer did not start has none, and nothing is stored unsealed. */
    public static SealedBytes of(HazelcastInstance member) {
        if (!(member.getUserContext().get(USER_CONTEXT_KEY) instanceof SealedBytes sealer)) {
            throw new IllegalStateException("Hazelcast member " + member.getName() + " was not started by kvindexer: "
                    + "it holds no seal for the cluster's values");
        }
        return sealer;
    }

    public byte[] seal(String kind, String key, byte[] bytes) {
        if (!signer.signs()) {
            return bytes;
        }
        byte[] sealed = new byte[HEAD + bytes.length];
        sealed[0] = MARK;
        System.arraycopy(signer.mac(kind, key, bytes), 0, sealed, 1, MAC_BYTES);
        System.arraycopy(bytes, 0, sealed, HEAD, bytes.length);
        return sealed;
    }

    /** The bytes {@link #seal} sealed under {@code kind} and {@code key}, or null (counted and logged) when refused. */
    public byte[] open(String kind, String key, byte[] sealed) {
        if (!signer.signs()) {
            return sealed;
        }
        String reason;
        if (sealed.length < HEAD || sealed[0] != MARK) {
            reason = ClusterValues.UNSIGNED;
        } else {
            byte[] bytes = Arrays.copyOfRange(sealed, HEAD, sealed.length);
            if (MessageDigest.isEqual(signer.mac(kind, key, bytes), Arrays.copyOfRange(sealed, 1, HEAD))) {
                return bytes;
            }
            reason = ClusterValues.BAD_SIGNATURE;
        }
        counters.rejected(kind, reason);
        log.refused(
                kind + "|" + reason,
                "ignored {} `{}` from the cluster: {} (counted in " + "kvindexer_cluster_values_rejected_total)",
                kind,
                key.length() > 80 ? key.substring(0, 80) : key,
                reason);
        return null;
    }

    /**
     * The bytes without their seal, unchecked: only for a step that is as harmless on a forgery as on the real thing
     * (removing an entry).
     */
    public byte[] peek(byte[] sealed) {
        return signer.signs() && sealed.length >= HEAD && sealed[0] == MARK
                ? Arrays.copyOfRange(sealed, HEAD, sealed.length)
                : sealed;
    }
}

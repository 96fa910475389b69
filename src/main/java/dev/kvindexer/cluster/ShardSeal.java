package dev.kvindexer.cluster;

import io.vertx.core.buffer.Buffer;
import java.security.MessageDigest;

/**
 * Seals shard messages between nodes with the cluster's shared token, as registrations are signed: a request carries
 * an HMAC-SHA256 of its bytes, a reply one of its request's bytes and its own, so a reply cannot be replayed to
 * another request. Without a token nothing is sealed and everything passes, as everywhere else in the cluster.
 */
final class ShardSeal {
    static final int MAC_BYTES = 32;
    private final ValueSigner signer;

    ShardSeal(String authToken) {
        this.signer = new ValueSigner(authToken);
    }

    Buffer request(String kind, Buffer body) {
        return signer.signs() ? body.copy().appendBytes(signer.mac(kind, body.getBytes())) : body;
    }

    /** The request's bytes without their seal; {@link SecurityException} when the seal is missing or wrong. */
    Buffer openRequest(String kind, Buffer sealed) {
        return open(kind, new byte[0], sealed);
    }

    Buffer reply(String kind, Buffer request, Buffer body) {
        return signer.signs() ? body.copy().appendBytes(signer.mac(kind + ".reply", concat(request, body))) : body;
    }

    /** A reply's bytes without their seal, checked against the request it answers. */
    Buffer openReply(String kind, Buffer request, Buffer sealed) {
        return open(kind + ".reply", request.getBytes(), sealed);
    }

    private Buffer open(String domain, byte[] prefix, Buffer sealed) {
        if (!signer.signs()) {
            return sealed;
        }
        if (sealed.length() < MAC_BYTES) {
            throw new SecurityException("unsigned");
        }
        Buffer body = sealed.getBuffer(0, sealed.length() - MAC_BYTES);
        byte[] given = sealed.getBytes(sealed.length() - MAC_BYTES, sealed.length());
        byte[] expected = signer.mac(domain, concat(Buffer.buffer(prefix), body));
        if (!MessageDigest.isEqual(expected, given)) {
            throw new SecurityException("bad_signature");
        }
        return body;
    }

    private static byte[] concat(Buffer a, Buffer b) {
        return a.copy().appendBuffer(b).getBytes();
    }
}

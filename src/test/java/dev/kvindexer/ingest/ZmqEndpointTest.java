package dev.kvindexer.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ZmqEndpointTest {
    @Test
    void acceptsTheReferenceValidEndpoints() {
        assertNull(ZmqEndpoint.invalidReason("tcp://*:5558"));
        assertNull(ZmqEndpoint.invalidReason("tcp://127.0.0.1:0"));
        assertNull(ZmqEndpoint.invalidReason("tcp://[::1]:5557"));
        assertNull(ZmqEndpoint.invalidReason("tcp://engine-0.svc:5557"));
        assertNull(ZmqEndpoint.invalidReason("ipc:///tmp/kv.sock"));
        assertNull(ZmqEndpoint.invalidReason("inproc://events"));
    }

    @Test
    void rejectsTheReferenceInvalidEndpointsWithReasons() {
        assertEquals("missing TCP port", ZmqEndpoint.invalidReason("tcp://host"));
        assertEquals("missing TCP host", ZmqEndpoint.invalidReason("tcp://:5558"));
        assertEquals("unsupported scheme udp", ZmqEndpoint.invalidReason("udp://host:5558"));
        assertEquals("missing scheme", ZmqEndpoint.invalidReason("not-an-endpoint"));
        assertEquals("missing TCP port", ZmqEndpoint.invalidReason("tcp://[::1]"));
        assertEquals("invalid TCP port 65536", ZmqEndpoint.invalidReason("tcp://h:65536"));
        assertEquals("invalid TCP port x1", ZmqEndpoint.invalidReason("tcp://h:x1"));
        assertTrue(ZmqEndpoint.invalidReason("ipc://").startsWith("missing"));
    }

    @Test
    void bindModeOnlyForTheWildcardHost() {
        assertTrue(ZmqEndpoint.bindsLocally("tcp://*:5557"));
        assertEquals(false, ZmqEndpoint.bindsLocally("tcp://127.0.0.1:5557"));
        assertTrue(ZmqEndpoint.isIpv6("tcp://[::1]:5557"));
    }
}

package dev.kvindexer.zmq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ZmqEndpointTest {
    /** docs/api/dynamo.md#endpoint-validation's table: Dynamo's validate_endpoint, step by step. */
    @Test
    void acceptsWhatDynamoAccepts() {
        for (String ok : new String[] {
            "tcp://127.0.0.1:5557",
            "tcp://*:5558",
            "tcp://127.0.0.1:0",
            "tcp://host:+80",
            "tcp://[::1]:5557",
            "tcp://[fe80::1%eth0]:5557",
            "tcp://engine-0.svc:5557",
            "tcp://eth0;10.0.0.1:1",
            "ipc:///tmp/x.sock",
            "inproc://listener",
            "ipc://x",
            "tcp://h:00080"
        }) {
            assertNull(ZmqEndpoint.invalidReason(ok), ok);
        }
    }

    @Test
    void refusesWhatDynamoRefusesWithItsWords() {
        String[][] cases = {
            {"tcp://::1:5557", "missing TCP port"},
            {"tcp://host", "missing TCP port"},
            {"tcp://:5558", "missing TCP host"},
            {"tcp://[::1:5557", "missing closing `]`"},
            {"tcp://[::1]", "missing closing `]`"},
            {"tcp://host:", "invalid TCP port: cannot parse integer from empty string"},
            {"tcp://host:-1", "invalid TCP port: invalid digit found in string"},
            {"tcp://host:*", "invalid TCP port: invalid digit found in string"},
            {"tcp://host:5557 ", "invalid TCP port: invalid digit found in string"},
            {"tcp://host:+", "invalid TCP port: invalid digit found in string"},
            {"tcp://host:65536", "invalid TCP port: number too large to fit in target type"},
            {"tcp://host:99999999999", "invalid TCP port: number too large to fit in target type"},
            {"tcp://", "missing address"},
            {"ipc://", "missing address"},
            {"udp://host:5558", "unsupported scheme `udp`"},
            {"TCP://host:5557", "unsupported scheme `TCP`"},
            {"not-an-endpoint", "missing scheme"},
        };
        for (String[] c : cases) {
            assertEquals(c[1], ZmqEndpoint.invalidReason(c[0]), c[0]);
        }
    }

    @Test
    void bindModeOnlyForTheWildcardHost() {
        assertTrue(ZmqEndpoint.bindsLocally("tcp://*:5557"));
        assertEquals(false, ZmqEndpoint.bindsLocally("tcp://127.0.0.1:5557"));
        assertTrue(ZmqEndpoint.isIpv6("tcp://[::1]:5557"));
    }
}

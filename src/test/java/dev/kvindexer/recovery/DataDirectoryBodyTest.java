package dev.kvindexer.recovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kvindexer.dump.SnapshotWriter;
import dev.kvindexer.event.PartitionKey;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A data-directory snapshot whose envelope and checksum are right but whose body is not what a node writes: each is
 * refused with its reason and moved aside, nothing allocated for sizes it only declares.
 */
class DataDirectoryBodyTest {
    private static final long MAX = 1 << 20;
    private static final String REGISTRATION =
            "{\"instance_id\":\"7\",\"dp_rank\":0,\"endpoint\":\"tcp://127.0.0.1:5557\","
                    + "\"replay_endpoint\":null,\"model_name\":\"m\",\"tenant_id\":\"default\",\"block_size\":16}";

    @TempDir
    Path dir;

    private static byte[] u32(int n) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(n).array();
    }

    /** The reason the only snapshot, written with {@code body}, is refused for; null when it loads. */
    private String refusal(byte[]... body) throws IOException {
        SnapshotFiles files = new SnapshotFiles(dir, MAX);
        files.write(out -> {
            for (byte[] part : body) {
                out.write(part);
            }
        });
        List<SnapshotFiles.Rejected> rejected = new ArrayList<>();
        Optional<SnapshotFiles.Loaded<DataDirectory.Contents>> loaded =
                files.loadNewest(in -> DataDirectory.readBody(in, MAX, "test"), rejected::add);
        return loaded.isPresent() ? null : rejected.get(0).reason();
    }

    private static byte[] registrations(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] emptyDocument() {
        byte[] head = SnapshotWriter.header();
        byte[] end = SnapshotWriter.end();
        byte[] doc = new byte[head.length + end.length];
        System.arraycopy(head, 0, doc, 0, head.length);
        System.arraycopy(end, 0, doc, head.length, end.length);
        return doc;
    }

    @Test
    void aWellFormedBodyLoads() throws IOException {
        byte[] json = registrations("{\"registrations\":[" + REGISTRATION + "]}");
        SnapshotFiles files = new SnapshotFiles(dir, MAX);
        byte[] payload = new byte[0];
        files.write(out -> {
            out.write(u32(json.length));
            out.write(json);
            out.write(SnapshotWriter.header());
            out.write(SnapshotWriter.sectionHead(new PartitionKey("m", "default"), 16, payload.length));
            out.write(SnapshotWriter.end());
        });
        DataDirectory.Contents c = files.loadNewest(in -> DataDirectory.readBody(in, MAX, "test"), r -> {})
                .orElseThrow()
                .value();
        assertEquals(1, c.registrations().size());
        assertEquals(7, c.registrations().get(0).workerId());
        assertTrue(c.index().containsKey(new PartitionKey("m", "default")));
    }

    @Test
    void aDeclaredRegistrationsLengthPastTheLimitIsRefusedBeforeAllocating() throws IOException {
        String reason = refusal(u32(Integer.MAX_VALUE));
        assertTrue(reason.contains("registrations of 2147483647 bytes declared"), reason);
        assertTrue(refusal(u32(-1)).contains("declared"));
    }

    @Test
    void registrationsCutShortOrNotJsonOrInvalidAreRefused() throws IOException {
        assertTrue(refusal(u32(100), registrations("{}")).contains("cut short"));
        byte[] notJson = registrations("{\"registrations\":[");
        assertTrue(refusal(u32(notJson.length), notJson).contains("not JSON"));
        byte[] none = registrations("{}");
        assertTrue(refusal(u32(none.length), none, emptyDocument()).contains("no registrations array"));
        byte[] bad = registrations("{\"registrations\":[" + REGISTRATION.replace("tcp://", "ftp://") + "]}");
        assertTrue(refusal(u32(bad.length), bad, emptyDocument()).contains("invalid endpoint"));
    }

    @Test
    void aSnapshotDocumentThatIsNotOneIsRefused() throws IOException {
        byte[] json = registrations("{\"registrations\":[]}");
        String reason = refusal(u32(json.length), json, registrations("not a snapshot"));
        assertTrue(reason.contains("not a kvindexer snapshot"), reason);
        byte[] head = SnapshotWriter.header();
        assertTrue(refusal(u32(json.length), json, head).contains("cut short"));
    }
}

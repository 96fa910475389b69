package dev.kvindexer.web;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ReadinessTest {
    @Test
    void theFirstComponentWithAProblemIsWhyAndEachIsAskedAfresh() {
        AtomicReference<String> startup = new AtomicReference<>("recovering from peers [http://a]");
        AtomicReference<String> ingest = new AtomicReference<>("ingest thread died");
        Readiness readiness = new Readiness(List.of(startup::get, ingest::get));
        assertEquals("recovering from peers [http://a]", readiness.notReadyReason());
        startup.set(null);
        assertEquals("ingest thread died", readiness.notReadyReason());
        ingest.set(null);
        assertNull(readiness.notReadyReason());
    }
}

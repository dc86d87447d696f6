package dev.crossbar.server.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The legacy fields use Go's formats, as the original crossbar printed them. Expected values are Go's output. */
class GoFormatTest {

    @Test
    void durationsAsGoPrintsThem() {
        assertEquals("0s", GoFormat.duration(0));
        assertEquals("850ns", GoFormat.duration(850));
        assertEquals("1.5µs", GoFormat.duration(1_500));
        assertEquals("356.934478ms", GoFormat.duration(356_934_478));
        assertEquals("1ms", GoFormat.duration(1_000_000));
        assertEquals("1.318438348s", GoFormat.duration(1_318_438_348));
        assertEquals("1m0s", GoFormat.duration(60_000_000_000L));
        assertEquals("2m3.5s", GoFormat.duration(123_500_000_000L));
        assertEquals("1h0m0s", GoFormat.duration(3_600_000_000_000L));
        assertEquals("26h3m4s", GoFormat.duration((26 * 3600 + 3 * 60 + 4) * 1_000_000_000L));
    }

    @Test
    void timesAsGoPrintsThemInUtc() {
        assertEquals("2026-11-22 16:16:19.948 +0000 UTC",
                GoFormat.time(Instant.parse("2026-11-22T16:16:19.948Z").toEpochMilli()));
        assertEquals("2026-11-22 16:16:19.9 +0000 UTC",
                GoFormat.time(Instant.parse("2026-11-22T16:16:19.900Z").toEpochMilli()));
        assertEquals("2026-11-22 16:16:19 +0000 UTC",
                GoFormat.time(Instant.parse("2026-11-22T16:16:19Z").toEpochMilli()));
    }
}

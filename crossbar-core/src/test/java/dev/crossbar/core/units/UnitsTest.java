package dev.crossbar.core.units;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class UnitsTest {

    @Test
    void sizesInEverySpellingArePowersOf1024() {
        assertEquals(4096, Units.parseBytes("4096"));
        assertEquals(64 * 1024, Units.parseBytes("64KiB"));
        assertEquals(64 * 1024, Units.parseBytes("64k"));
        assertEquals(64 * 1024, Units.parseBytes(" 64 kb "));
        assertEquals(10L << 20, Units.parseBytes("10MiB"));
        assertEquals(1L << 30, Units.parseBytes("1GiB"));
        assertEquals(5, Units.parseBytes("5b"));
    }

    @Test
    void badSizesNameTheTextAndTheExpectation() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Units.parseBytes("lots"));
        assertTrue(e.getMessage().contains("'lots'") && e.getMessage().contains("expected"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Units.parseBytes("-1"));
        assertThrows(IllegalArgumentException.class, () -> Units.parseBytes("1.5MiB"));
        assertThrows(IllegalArgumentException.class, () -> Units.parseBytes("99999999999GiB"));
        assertThrows(IllegalArgumentException.class, () -> Units.parseIntBytes("2GiB"));
        assertEquals((1 << 30), Units.parseIntBytes("1GiB"));
    }

    @Test
    void durations() {
        assertEquals(Duration.ofMillis(500), Units.parseDuration("500ms"));
        assertEquals(Duration.ofMillis(1500), Units.parseDuration("1.5s"));
        assertEquals(Duration.ofSeconds(30), Units.parseDuration("30s"));
        assertEquals(Duration.ofSeconds(10), Units.parseDuration("10"));
        assertEquals(Duration.ofMinutes(5), Units.parseDuration("5m"));
        assertEquals(Duration.ofHours(24), Units.parseDuration("24h"));
        assertEquals(Duration.ofSeconds(30), Units.parseDuration("PT30S"));
        assertEquals(Duration.ZERO, Units.parseDuration("0"));
        assertThrows(IllegalArgumentException.class, () -> Units.parseDuration("soon"));
        assertThrows(IllegalArgumentException.class, () -> Units.parseDuration("-5s"));
        assertThrows(IllegalArgumentException.class, () -> Units.parseDuration("PT-5S"));
    }

    @Test
    void printedValuesParseBackToThemselves() {
        for (long b : new long[] {0, 1, 4600, 1024, 512 * 1024, 10L << 20, 3L << 30}) {
            assertEquals(b, Units.parseBytes(Units.formatBytes(b)), Units.formatBytes(b));
        }
        assertEquals("10MiB", Units.formatBytes(10L << 20));
        assertEquals("512KiB", Units.formatBytes(512 * 1024));
        for (Duration d : new Duration[] {Duration.ZERO, Duration.ofMillis(250), Duration.ofSeconds(30),
                Duration.ofMinutes(5), Duration.ofHours(24), Duration.ofNanos(1500), Duration.ofMillis(1500)}) {
            assertEquals(d, Units.parseDuration(Units.formatDuration(d)), Units.formatDuration(d));
        }
        assertEquals("24h", Units.formatDuration(Duration.ofHours(24)));
        assertEquals("1500ms", Units.formatDuration(Duration.ofMillis(1500)));
    }

    @Test
    void bitRatesAndMessageRates() {
        assertEquals(2_000_000, Units.parseBitRate("2Mbit"));
        assertEquals(2_000_000, Units.parseBitRate("2mbps"));
        assertEquals(2_000_000, Units.parseBitRate("2Mbit/s"));
        assertEquals(500_000, Units.parseBitRate("500kbit"));
        assertEquals(1_500_000, Units.parseBitRate("1.5Mbit"));
        assertEquals(64_000, Units.parseBitRate("64000"));
        assertEquals("2Mbit", Units.formatBitRate(2_000_000));
        assertEquals("1500kbit", Units.formatBitRate(1_500_000));
        assertThrows(IllegalArgumentException.class, () -> Units.parseBitRate("2MiB"));
        assertEquals(50.0, Units.parseRate("50/s"));
        assertEquals(10.0, Units.parseRate("600/m"));
        assertEquals(50.0, Units.parseRate("50"));
        assertEquals("50/s", Units.formatRate(50));
        assertEquals("0.5/s", Units.formatRate(0.5));
        assertEquals(0.5, Units.parseRate(Units.formatRate(0.5)));
        assertThrows(IllegalArgumentException.class, () -> Units.parseRate("-5/s"));
    }
}

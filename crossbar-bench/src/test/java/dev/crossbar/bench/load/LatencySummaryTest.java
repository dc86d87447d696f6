package dev.crossbar.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class LatencySummaryTest {

    @Test
    void percentilesOfAKnownDistributionInMicroseconds() {
        Histogram h = LatencySummary.newHistogram();
        for (int us = 1; us <= 10_000; us++) {
            h.recordValue(us * 1000L);
        }
        LatencySummary s = LatencySummary.of(h);
        assertEquals(10_000, s.count());
        // Three significant digits: each figure within 0.1% of the exact rank.
        assertEquals(5000, s.p50Us(), 5);
        assertEquals(9000, s.p90Us(), 9);
        assertEquals(9900, s.p99Us(), 10);
        assertEquals(9990, s.p999Us(), 10);
        assertEquals(10_000, s.maxUs(), 10);
        assertEquals(5000.5, s.meanUs(), 5);
    }

    @Test
    void aSkewedTailShowsOnlyInTheHighPercentiles() {
        Histogram h = LatencySummary.newHistogram();
        for (int i = 0; i < 990; i++) {
            h.recordValue(100_000); // 100 us
        }
        for (int i = 0; i < 10; i++) {
            h.recordValue(50_000_000); // 50 ms
        }
        LatencySummary s = LatencySummary.of(h);
        assertEquals(100, s.p50Us(), 0.5);
        assertEquals(100, s.p99Us(), 0.5);
        assertEquals(50_000, s.p999Us(), 50);
    }

    @Test
    void nothingMeasuredReportsNoFiguresRatherThanZeros() {
        LatencySummary s = LatencySummary.of(LatencySummary.newHistogram());
        assertEquals(0, s.count());
        assertNull(s.p50Us());
        assertNull(s.p99Us());
        assertNull(s.maxUs());
    }
}

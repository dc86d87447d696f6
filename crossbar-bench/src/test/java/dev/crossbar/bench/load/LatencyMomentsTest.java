package dev.crossbar.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LatencyMomentsTest {

    private static final long MS = 1_000_000;

    /** {@code n} deliveries in the moment starting at {@code atMs}: n-1 at {@code ageMs}, one at {@code slowestMs}. */
    private static void moment(LatencyMoments m, long atMs, int n, long ageMs, long slowestMs) {
        for (int i = 0; i < n - 1; i++) {
            m.record(atMs * MS + i, ageMs * MS);
        }
        m.record(atMs * MS + n, slowestMs * MS);
    }

    @Test
    void deliveriesOfOneAgeHaveNoSpread() {
        LatencyMoments m = new LatencyMoments(100 * MS);
        moment(m, 0, 20, 8, 8);
        moment(m, 5, 20, 3, 3);
        assertEquals(1.0, m.spread(0.5));
        assertEquals(1.0, m.spread(0.9));
    }

    @Test
    void spreadIsTheSlowestOverTheMeanOfEachMoment() {
        LatencyMoments m = new LatencyMoments(100 * MS);
        // Mean (9 * 10 + 28) / 10 = 11.8 ms, slowest 28: 2.37.
        moment(m, 0, 10, 10, 28);
        // Mean (9 * 10 + 10) / 10 = 10: 1.0, twice.
        moment(m, 5, 10, 10, 10);
        moment(m, 10, 10, 10, 10);
        assertEquals(1.0, m.spread(0.5));
        assertEquals(2.37, m.spread(1.0));
    }

    @Test
    void thinMomentsAndArrivalsOutsideTheSpanAreLeftOut() {
        LatencyMoments m = new LatencyMoments(10 * MS);
        moment(m, 0, LatencyMoments.MIN_DELIVERIES - 1, 1, 50);
        m.record(-1, 99 * MS);
        m.record(10 * MS, 99 * MS);
        assertNull(m.spread(0.5), "no moment with enough deliveries");
        moment(m, 5, LatencyMoments.MIN_DELIVERIES, 4, 4);
        assertEquals(1.0, m.spread(0.5));
    }

    @Test
    void loopsMergeIntoOneTimeline(@TempDir Path dir) throws Exception {
        LatencyMoments a = new LatencyMoments(20 * MS);
        LatencyMoments b = new LatencyMoments(20 * MS);
        moment(a, 0, 10, 2, 2);
        moment(b, 0, 10, 4, 6);
        moment(b, 15, 10, 7, 7);
        a.add(b);
        Path f = dir.resolve("trace.tsv");
        a.write(f, 123_456_789L);
        // Moment 0: 20 deliveries, mean (10 * 2 + 9 * 4 + 6) / 20 = 3.1 ms, slowest 6; moment 15 from b alone.
        assertEquals(List.of("# measurement from 123456789 ns (System.nanoTime, CLOCK_MONOTONIC on Linux)",
                        "# ms\tdeliveries\tmeanUs\tmaxUs", "0\t20\t3100\t6000", "15\t10\t7000\t7000"),
                Files.readAllLines(f));
        assertEquals(1.94, a.spread(1.0));
    }
}

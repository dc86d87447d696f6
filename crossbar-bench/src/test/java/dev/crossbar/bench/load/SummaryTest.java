package dev.crossbar.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class SummaryTest {

    @Test
    void medianOfOddAndEvenCounts() {
        assertEquals(2, Summary.median(new double[] {3, 1, 2}));
        assertEquals(2.5, Summary.median(new double[] {4, 1, 3, 2}));
        assertEquals(7, Summary.median(new double[] {7}));
    }

    @Test
    void summaryHasMedianAndRangeOfEachFigureAndTheConfigurationOfTheFirstRun() {
        List<RunResult> runs = List.of(
                new RunResult().put("scenario", "pingpong").put("size", 64).put("msgPerS", 100.0).put("p99Us", 50.0),
                new RunResult().put("scenario", "pingpong").put("size", 64).put("msgPerS", 300.0).put("p99Us", 70.0),
                new RunResult().put("scenario", "pingpong").put("size", 64).put("msgPerS", 200.0).put("p99Us", 900.0));
        RunResult s = Summary.of(runs);
        assertEquals("summary", s.get("kind"));
        assertEquals(3, s.get("runs"));
        assertEquals(64, s.get("size"));
        assertEquals(200.0, s.number("msgPerS"));
        assertEquals(100.0, s.number("msgPerSMin"));
        assertEquals(300.0, s.number("msgPerSMax"));
        assertEquals(70.0, s.number("p99Us"), "the median resists one outlier");
        assertNull(s.get("cpuSPerGB"), "a figure no run had stays absent");
    }

    @Test
    void noRunsIsAnError() {
        assertThrows(IllegalArgumentException.class, () -> Summary.of(List.of()));
    }

    @Test
    void resultsAreJsonLinesInKeyOrderWithoutAbsentFigures() {
        RunResult r = new RunResult().put("kind", "run").put("p50Us", null).put("lost", 0L);
        assertEquals("{\"kind\":\"run\",\"lost\":0}", r.toJson());
    }
}

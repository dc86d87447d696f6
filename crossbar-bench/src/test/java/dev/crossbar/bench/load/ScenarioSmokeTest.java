package dev.crossbar.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One short run of each scenario against the real relay, started in-process on an ephemeral
 * loopback port. Seconds each; they assert integrity (nothing lost, merged, reordered or
 * corrupt) and that the run reports what it measured, not speed.
 */
class ScenarioSmokeTest {

    private InProcessRelay relay;

    @BeforeEach
    void start() {
        relay = new InProcessRelay(2);
    }

    @AfterEach
    void stop() {
        relay.close();
    }

    private LoadConfig.Builder quick(Scenario s) {
        return LoadConfig.builder(s, relay.baseUri())
                .label("crossbar")
                .warmup(Duration.ofMillis(200))
                .duration(Duration.ofSeconds(1))
                .settle(Duration.ofMillis(200))
                .drain(Duration.ofSeconds(3))
                .connectTimeout(Duration.ofSeconds(20));
    }

    private RunResult run(LoadConfig c) throws Exception {
        long start = System.nanoTime();
        RunResult r = new LoadRun(c, relay, 1).run();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(took.compareTo(c.upperBound()) < 0, "run took " + took + ", bound " + c.upperBound());
        return r;
    }

    private static void assertIntact(RunResult r) {
        assertTrue(r.number("sent") > 0, "sent nothing: " + r);
        assertEquals(r.number("expected"), r.number("delivered"), "every message delivered whole: " + r);
        assertEquals(0.0, r.number("lost"), r.toString());
        assertEquals(0.0, r.number("mergedFrames"), r.toString());
        assertEquals(0.0, r.number("reordered"), r.toString());
        assertEquals(0.0, r.number("duplicates"), r.toString());
        assertEquals(0.0, r.number("corrupt"), r.toString());
        assertEquals(0.0, r.number("errors"), r.toString());
        assertTrue(r.number("msgPerS") > 0, r.toString());
        assertNotNull(r.number("p99Us"), "latency measured: " + r);
    }

    @Test
    void pingpongOf64BytesWritesOneFramePerWrite() throws Exception {
        RunResult r = run(quick(Scenario.PINGPONG).build());
        assertIntact(r);
        assertEquals(1, r.get("batch"), r.toString());
        assertNull(r.get("spawnSession"), "not spawned: " + r);
    }

    @Test
    void pingpongWithBatchedWritesAsBefore() throws Exception {
        RunResult r = run(quick(Scenario.PINGPONG).window(64).batch(LoadConfig.MAX_BATCH).build());
        assertIntact(r);
        assertEquals(LoadConfig.MAX_BATCH, r.get("batch"), r.toString());
    }

    @Test
    void pingpongOf3BytesUsesTheTinyForm() throws Exception {
        RunResult r = run(quick(Scenario.PINGPONG).size(3).build());
        assertIntact(r);
        assertEquals(3, r.get("size"));
    }

    @Test
    void pingpongAtAPacedRate() throws Exception {
        RunResult r = run(quick(Scenario.PINGPONG).rate(2000.0).build());
        assertIntact(r);
        // 1.2 s of sending at 2,000/s: paced, not flat out.
        assertTrue(r.number("sent") < 2000 * 1.2 * 1.1 + 10, r.toString());
    }

    @Test
    void largeMessagesArriveByteExact() throws Exception {
        RunResult r = run(quick(Scenario.LARGE).build());
        assertIntact(r);
        assertTrue(r.number("egressMbitS") > 0, r.toString());
    }

    @Test
    void videoLikeFanout() throws Exception {
        RunResult r = run(quick(Scenario.FANOUT).count(50).rate(30.0).build());
        assertIntact(r);
        assertEquals(r.number("sent") * 50, r.number("expected"));
    }

    @Test
    void asFastAsPossibleFanoutWithItsLatencyByMoment(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("trace.tsv");
        RunResult r = run(quick(Scenario.FANOUT).count(10).rate(0.0).latencyTrace(trace).build());
        assertIntact(r);
        assertTrue(r.number("momentSpreadP50") >= 1.0, r.toString());
        assertTrue(r.number("momentSpreadP90") >= r.number("momentSpreadP50"), r.toString());
        List<String> lines = Files.readAllLines(trace);
        assertTrue(lines.size() > 2, "moments written after the two header lines: " + lines);
        long deliveries = lines.stream().filter(l -> !l.startsWith("#")).mapToLong(l -> Long.parseLong(l.split("\t")[1])).sum();
        assertEquals(r.number("latencyCount"), (double) deliveries, "every measured delivery in one moment: " + r);
    }

    @Test
    void asFastAsPossibleFanoutInBatches() throws Exception {
        assertIntact(run(quick(Scenario.FANOUT).count(10).rate(0.0).batch(16).build()));
    }

    /**
     * VBDS's shape (vbds.sh): one publisher writing 1 MiB messages as fast as its socket takes
     * (no window: only TCP holds it back), two subscribers, every stream under slow=backpressure.
     * Nothing may be lost, merged or corrupted, however far ahead the publisher could run.
     */
    @Test
    void socketBoundPublisherLosesNothingUnderBackpressure() throws Exception {
        relay.close();
        relay = new InProcessRelay(2, SlowPolicy.BACKPRESSURE);
        RunResult r = run(quick(Scenario.FANOUT).count(2).size(1024 * 1024).rate(100_000.0).window(0)
                .slow(SlowPolicy.BACKPRESSURE).build());
        assertIntact(r);
        assertEquals("backpressure", r.get("slow"));
        assertNotNull(r.get("meanUs"), "mean latency reported: " + r);
    }

    @Test
    void meshOfClientsHearingEachOther() throws Exception {
        RunResult r = run(quick(Scenario.MESH).count(5).rate(100.0).build());
        assertIntact(r);
        assertEquals(r.number("sent") * 4, r.number("expected"), "each message reaches the other four");
    }

    @Test
    void slowSubscriberDoesNotHoldBackTheOthers() throws Exception {
        // 4 KiB at 200/s: light enough that a cold, busy test JVM keeps up with the healthy
        // subscribers (lagging ones would rightly be dropped by the relay's per-client bound).
        RunResult r = run(quick(Scenario.SLOW).count(3).size(4 * 1024).rate(200.0)
                .duration(Duration.ofSeconds(2)).build());
        assertIntact(r);
        assertNotNull(r.get("slowReceived"));
        assertTrue(r.number("stalledS") < 1.0, "the others kept receiving to the end: " + r);
    }

    @Test
    void idleConnectionsStayOpen() throws Exception {
        RunResult r = run(quick(Scenario.IDLE).count(200).duration(Duration.ofMillis(300)).build());
        assertEquals(200.0, r.number("stillOpen"), r.toString());
        assertEquals(0.0, r.number("errors"), r.toString());
        assertNotNull(r.number("heapPerConnB"), "in-process heap is readable: " + r);
    }
}

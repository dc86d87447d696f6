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
class ScenarioSmokeIT {

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
        relay = new InProcessRelay(2, SlowPolicy.BACKPRESSURE, SlowPolicy.ALL_STREAMS);
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

    // ---- a campus's shapes: many groups at once, each paced, every message checked ----

    /** Asserts what {@link #assertIntact} does for the part of a run named {@code part}. */
    private static void assertPartIntact(RunResult r, String part) {
        assertTrue(r.number(part + ".sent") > 0, part + " sent nothing: " + r);
        assertEquals(r.number(part + ".expected"), r.number(part + ".delivered"), part + ": every message delivered whole: " + r);
        for (String k : List.of("lost", "mergedFrames", "reordered", "duplicates", "corrupt")) {
            assertEquals(0.0, r.number(part + "." + k), part + "." + k + ": " + r);
        }
        assertTrue(r.number(part + ".msgPerS") > 0, r.toString());
        assertNotNull(r.number(part + ".p99Us"), part + " latency measured: " + r);
    }

    /** What every campus run reports beside integrity: a cold start's figures, and its shape. */
    private static void assertCampusFigures(RunResult r, int groups) {
        assertEquals(groups, r.get("groups"), r.toString());
        assertNotNull(r.number("firstRelayMs"), "first message relayed: " + r);
        assertTrue(r.number("firstRelayMs") >= r.number("firstConnectMs"), "relayed after connecting: " + r);
        assertNotNull(r.number("p99First10sUs"), "the first seconds' p99: " + r);
        assertNotNull(r.number("p999Us"), r.toString());
        assertTrue(r.number("sendPacePct") > 0, "the senders' pace against their rates: " + r);
    }

    @Test
    void manyStreamsWithAFewViewersEach() throws Exception {
        LoadConfig c = quick(Scenario.STREAMS).groups(20).count(3).connectRate(400.0)
                .duration(Duration.ofMillis(1500)).build();
        RunResult r = run(c);
        assertIntact(r);
        assertCampusFigures(r, 20);
        assertEquals(r.number("sent") * 3, r.number("expected"), "each camera's messages reach its three viewers");
        // 30/s for 1.7 s from each of 20 cameras: paced, not flat out.
        assertTrue(r.number("sent") <= 20 * (30 * 1.7 + 2), r.toString());
        // 80 connections at 400 a second: the last one starts 79/400 s after the first.
        assertTrue(r.number("connectS") >= 0.19, "connections paced: " + r);
    }

    @Test
    void manySmallTopicsOfTwoClients() throws Exception {
        RunResult r = run(quick(Scenario.TOPICS).groups(50).count(2).duration(Duration.ofMillis(1500)).build());
        assertIntact(r);
        assertCampusFigures(r, 50);
        assertEquals(r.number("sent"), r.number("expected"), "each message reaches the topic's other client");
    }

    @Test
    void manySmallTopicsOfThreeClients() throws Exception {
        RunResult r = run(quick(Scenario.TOPICS).groups(20).count(3).duration(Duration.ofMillis(1000)).build());
        assertIntact(r);
        assertEquals(r.number("sent") * 2, r.number("expected"), "each message reaches the topic's two others");
    }

    /**
     * Video to viewers with a stalled reader on the first camera, data topics, and a file
     * transfer that the relay holds lossless (its stream alone under slow=backpressure): every
     * part intact, each reported on its own.
     */
    @Test
    void mixedLoadIsIntactInEveryPart() throws Exception {
        relay.close();
        relay = new InProcessRelay(2, SlowPolicy.BACKPRESSURE, Scenario.MIXED.backpressurePattern());
        LoadConfig c = quick(Scenario.MIXED).groups(6).count(3).dataTopics(15).stalled(1)
                .slow(SlowPolicy.BACKPRESSURE).duration(Duration.ofMillis(1500)).build();
        RunResult r = run(c);
        assertIntact(r);
        assertCampusFigures(r, 6);
        for (String part : List.of(Plan.VIDEO, Plan.DATA, Plan.FILE)) {
            assertPartIntact(r, part);
        }
        assertEquals(r.number("video.sent") * 3, r.number("video.expected"), "the stalled reader is not expected to keep up");
        assertEquals(r.number("file.sent"), r.number("file.expected"), "one reader of the file");
        assertEquals(r.number("video.expected") + r.number("data.expected") + r.number("file.expected"), r.number("expected"));
        assertNotNull(r.get("slowReceived"), "the stalled reader's count: " + r);
        assertEquals(1, r.get("stalled"));
        assertTrue(r.number("stalledS") < 1.0, "the others kept receiving to the end: " + r);
    }
}

package dev.crossbar.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class LoadConfigTest {

    private static final URI LOCAL = URI.create("ws://127.0.0.1:8080");

    private static LoadConfig.Builder b(Scenario s) {
        return LoadConfig.builder(s, LOCAL);
    }

    private static void rejects(String expectedText, LoadConfig.Builder builder) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, builder::build);
        assertTrue(e.getMessage().contains(expectedText), e.getMessage());
    }

    @Test
    void scenarioDefaults() {
        LoadConfig pp = b(Scenario.PINGPONG).build();
        assertEquals(64, pp.size());
        assertEquals(1, pp.count());
        assertEquals(0, pp.rate());
        assertEquals(128, pp.window());
        LoadConfig video = b(Scenario.FANOUT).build();
        assertEquals(4600, video.size());
        assertEquals(30, video.rate());
        assertEquals(0, video.window(), "a camera does not wait for its viewers");
        LoadConfig afap = b(Scenario.FANOUT).rate(0.0).build();
        assertEquals(Scenario.AS_FAST_AS_POSSIBLE_WINDOW, afap.window());
        assertEquals(1024 * 1024, b(Scenario.LARGE).build().size());
        assertEquals(LoadConfig.DEFAULT_DURATION, pp.duration());
        assertEquals(1, pp.batch(), "one frame per write, as browsers send");
    }

    @Test
    void everyRunIsBoundedInTime() {
        LoadConfig c = b(Scenario.FANOUT).warmup(Duration.ofSeconds(1)).duration(Duration.ofSeconds(2))
                .drain(Duration.ofSeconds(3)).settle(Duration.ZERO).connectTimeout(Duration.ofSeconds(4)).build();
        // The first contact (the generator's own round trip, the relay's connect, its message), the
        // run's connect, warm-up, duration, drain, closing.
        assertEquals(Duration.ofSeconds(5 + 4 + 1 + 4 + 1 + 2 + 3 + 10), c.upperBound());
        rejects("duration", b(Scenario.FANOUT).duration(Duration.ofMinutes(11)));
        rejects("duration", b(Scenario.FANOUT).duration(Duration.ZERO));
        rejects("warmup", b(Scenario.FANOUT).warmup(Duration.ofMinutes(3)));
        rejects("drain", b(Scenario.FANOUT).drain(Duration.ofSeconds(-1)));
        rejects("connectTimeout", b(Scenario.IDLE).connectTimeout(Duration.ofMinutes(5)));
    }

    @Test
    void everyRunIsBoundedInCount() {
        rejects("maxMessages", b(Scenario.PINGPONG).maxMessages(0));
        rejects("maxMessages", b(Scenario.PINGPONG).maxMessages(LoadConfig.MAX_MESSAGES + 1));
        rejects("count", b(Scenario.IDLE).count(LoadConfig.MAX_CONNECTIONS + 1));
        rejects("count", b(Scenario.FANOUT).count(0));
        rejects("rate 0 and window 0", b(Scenario.FANOUT).rate(0.0).window(0));
        rejects("window", b(Scenario.PINGPONG).window(SendTimes.CAPACITY + 1));
        rejects("rate", b(Scenario.FANOUT).rate(-1.0));
        rejects("batch", b(Scenario.PINGPONG).batch(0));
        rejects("batch", b(Scenario.PINGPONG).batch(LoadConfig.MAX_BATCH + 1));
    }

    @Test
    void loopbackOnly() {
        rejects("loopback", LoadConfig.builder(Scenario.PINGPONG, URI.create("ws://10.0.0.1:8080")));
        rejects("ws://", LoadConfig.builder(Scenario.PINGPONG, URI.create("http://127.0.0.1:8080")));
        rejects("bind", b(Scenario.IDLE).bindAddresses(java.util.List.of("192.168.1.2")));
        assertEquals(URI.create("ws://localhost:9"),
                LoadConfig.builder(Scenario.PINGPONG, URI.create("ws://localhost:9/ignored/path")).build().baseUri());
    }

    @Test
    void messageShapesThatCannotBeChecked() {
        rejects("size", b(Scenario.PINGPONG).size(2));
        rejects("size", b(Scenario.LARGE).size(MessageFormat.MAX_SIZE + 1));
        rejects("mesh", b(Scenario.MESH).size(3));
        rejects("expected: 1", b(Scenario.PINGPONG).count(2));
        rejects("window: 0", b(Scenario.PINGPONG).size(3).rate(1000.0).window(0));
        rejects("topic", b(Scenario.PINGPONG).topic("a/b"));
    }

    @Test
    void unitsOnTheCommandLine() {
        assertEquals(64, Units.parseSize("64"));
        assertEquals(4096, Units.parseSize("4KiB"));
        assertEquals(1048576, Units.parseSize("1MiB"));
        assertEquals(Duration.ofMillis(500), Units.parseDuration("500ms"));
        assertEquals(Duration.ofMillis(1500), Units.parseDuration("1.5s"));
        assertEquals(Duration.ofSeconds(120), Units.parseDuration("2m"));
        assertEquals(Duration.ofSeconds(10), Units.parseDuration("10"));
        assertThrows(IllegalArgumentException.class, () -> Units.parseSize("lots"));
        assertThrows(IllegalArgumentException.class, () -> Units.parseDuration("soon"));
    }

    @Test
    void commandLineMapsOntoTheConfig() {
        LoadCommand cmd = new LoadCommand();
        new picocli.CommandLine(cmd).setCaseInsensitiveEnumValuesAllowed(true).parseArgs(
                "fanout", "--url", "ws://127.0.0.1:9000", "-n", "500", "--rate", "30", "--size", "4600",
                "--duration", "15s", "--warmup", "3s", "--repeat", "3");
        LoadConfig c = cmd.toConfig(URI.create("ws://127.0.0.1:9000"), 1);
        assertEquals(Scenario.FANOUT, c.scenario());
        assertEquals(500, c.count());
        assertEquals(30, c.rate());
        assertEquals(Duration.ofSeconds(15), c.duration());
        assertEquals(3, cmd.repeat);
        assertEquals(LoadConfig.DEFAULT_BATCH, c.batch());
        assertEquals(SpawnedRelay.Session.OWN, cmd.spawnSession);
        assertNull(c.latencyTrace(), "no trace unless asked");

        LoadCommand traced = new LoadCommand();
        new picocli.CommandLine(traced).setCaseInsensitiveEnumValuesAllowed(true).parseArgs("fanout", "--url", "ws://127.0.0.1:9000", "--latency-trace", "out/t.tsv");
        assertEquals(Path.of("out/t.tsv"), traced.toConfig(URI.create("ws://127.0.0.1:9000"), 1).latencyTrace());
        LoadCommand tracedRuns = new LoadCommand();
        new picocli.CommandLine(tracedRuns).setCaseInsensitiveEnumValuesAllowed(true).parseArgs("fanout", "--url", "ws://127.0.0.1:9000", "--latency-trace", "out/t.tsv",
                "--repeat", "3");
        assertEquals(Path.of("out/t.tsv-2"), tracedRuns.toConfig(URI.create("ws://127.0.0.1:9000"), 2).latencyTrace(),
                "one file per run");

        LoadCommand old = new LoadCommand();
        new picocli.CommandLine(old).setCaseInsensitiveEnumValuesAllowed(true).parseArgs(
                "pingpong", "--spawn", "relay {port}", "--spawn-session", "inherit", "--batch", "256");
        assertEquals(SpawnedRelay.Session.INHERIT, old.spawnSession);
        assertEquals(256, old.toConfig(URI.create("ws://127.0.0.1:9000"), 1).batch());
        assertEquals(2, LoadMain.run("pingpong", "--url", "ws://10.1.2.3:80"), "a non-loopback URL is refused");
        assertEquals(2, LoadMain.run("pingpong"), "a relay must be named");
    }

    @Test
    void campusShapesDefaults() {
        LoadConfig streams = b(Scenario.STREAMS).build();
        assertEquals(200, streams.groups());
        assertEquals(4, streams.count(), "viewers per stream");
        assertEquals(30, streams.rate());
        assertEquals(4600, streams.size());
        assertEquals(0, streams.window(), "a camera does not wait for its viewers");
        assertEquals(1000, streams.connectRate());
        LoadConfig topics = b(Scenario.TOPICS).build();
        assertEquals(1000, topics.groups());
        assertEquals(2, topics.count(), "clients per topic");
        assertEquals(10, topics.rate());
        assertEquals(200, topics.size());
        LoadConfig mixed = b(Scenario.MIXED).build();
        assertEquals(50, mixed.groups());
        assertEquals(LoadConfig.DEFAULT_DATA_TOPICS, mixed.dataTopics());
        assertEquals(LoadConfig.DEFAULT_STALLED, mixed.stalled());
        LoadConfig fanout = b(Scenario.FANOUT).build();
        assertEquals(1, fanout.groups());
        assertEquals(0, fanout.connectRate(), "single-topic scenarios connect as before");
        assertEquals(0, fanout.stalled());
        assertEquals(0, fanout.dataTopics());
        assertEquals(mixed.stalled(), mixed.toBuilder().build().stalled(), "copied");
    }

    @Test
    void campusShapesThatCannotBeRun() {
        rejects("groups", b(Scenario.FANOUT).groups(2));
        rejects("groups", b(Scenario.STREAMS).groups(0));
        rejects("groups", b(Scenario.TOPICS).groups(LoadConfig.MAX_GROUPS + 1));
        rejects("dataTopics: 5 (expected: only for mixed)", b(Scenario.STREAMS).dataTopics(5));
        rejects("stalled: 1 (expected: only for mixed)", b(Scenario.FANOUT).stalled(1));
        rejects("stalled", b(Scenario.MIXED).stalled(LoadConfig.MAX_STALLED + 1));
        rejects("dataTopics", b(Scenario.MIXED).dataTopics(-1));
        rejects("count", b(Scenario.TOPICS).count(1));
        rejects("window: 4 (expected: 0 for topics", b(Scenario.TOPICS).window(4));
        rejects("rate: 0", b(Scenario.STREAMS).rate(0.0).window(8));
        rejects("rate: 0", b(Scenario.MIXED).rate(0.0).window(8));
        rejects("carry their send time", b(Scenario.STREAMS).size(10));
        rejects("must name their sender", b(Scenario.TOPICS).size(10));
        rejects("connections (expected: <= " + LoadConfig.MAX_CONNECTIONS, b(Scenario.STREAMS).groups(10_000).count(20));
        rejects("connectRate", b(Scenario.STREAMS).connectRate(-1.0));
        rejects("connectRate", b(Scenario.STREAMS).connectRate(LoadConfig.MAX_CONNECT_RATE + 1));
        // At the edges: what is allowed.
        assertEquals(3, b(Scenario.TOPICS).count(3).build().count(), "three clients a topic");
        assertEquals(0, b(Scenario.MIXED).stalled(0).dataTopics(0).build().stalled(), "mixed without its stalled reader");
        assertEquals(8, b(Scenario.STREAMS).window(8).build().window(), "a camera may wait for its viewers");
    }

    @Test
    void campusShapesOnTheCommandLine() {
        LoadCommand cmd = new LoadCommand();
        new picocli.CommandLine(cmd).setCaseInsensitiveEnumValuesAllowed(true).parseArgs(
                "streams", "--url", "ws://127.0.0.1:9000", "--streams", "20", "--viewers", "3", "--connect-rate", "500");
        LoadConfig c = cmd.toConfig(URI.create("ws://127.0.0.1:9000"), 1);
        assertEquals(Scenario.STREAMS, c.scenario());
        assertEquals(20, c.groups());
        assertEquals(3, c.count());
        assertEquals(500, c.connectRate());

        LoadCommand mixed = new LoadCommand();
        new picocli.CommandLine(mixed).setCaseInsensitiveEnumValuesAllowed(true).parseArgs(
                "mixed", "--url", "ws://127.0.0.1:9000", "--groups", "10", "--data-topics", "30", "--stalled", "0");
        LoadConfig m = mixed.toConfig(URI.create("ws://127.0.0.1:9000"), 1);
        assertEquals(10, m.groups());
        assertEquals(30, m.dataTopics());
        assertEquals(0, m.stalled());
        assertEquals(2, LoadMain.run("topics", "--url", "ws://127.0.0.1:9", "--stalled", "1"),
                "a flag of mixed's is refused elsewhere, before connecting");
    }
}

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
        assertEquals(Duration.ofSeconds(1 + 2 + 3 + 4 + 10), c.upperBound());
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
}

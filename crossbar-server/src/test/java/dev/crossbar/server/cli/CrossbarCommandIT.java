package dev.crossbar.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.units.Units;
import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.config.SlowConsumerPolicy;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Flags map onto the config; bad values give one line naming the value, never a stack trace. */
class CrossbarCommandIT {

    private static CrossbarCommand parse(String... args) {
        CrossbarCommand cmd = ConfigSources.resolve(args, Map.of()).command();
        return cmd;
    }

    @Test
    void defaultsMatchTheDocumentedConstants() {
        ServerConfig c = parse("--listen", "127.0.0.1:8080").toConfig();
        ServerConfig d = ServerConfig.defaults();
        assertEquals(d.maxMessageBytes(), c.maxMessageBytes());
        assertEquals(10 * 1024 * 1024, c.maxMessageBytes());
        assertEquals(d.maxClientQueueBytes(), c.maxClientQueueBytes());
        assertEquals(d.subprotocols(), c.subprotocols());
        assertEquals(d.handshakeTimeout(), c.handshakeTimeout());
        assertEquals(d.pingInterval(), c.pingInterval());
        assertEquals(d.idleTimeout(), c.idleTimeout());
        assertEquals(d.httpIdleTimeout(), c.httpIdleTimeout());
        assertEquals(d.healthProbeInterval(), c.healthProbeInterval());
        assertEquals(d.healthMaxProbeAge(), c.healthMaxProbeAge());
        assertEquals(d.maxPathLength(), c.maxPathLength());
        assertEquals(d.maxLoopBacklogBytes(), c.maxLoopBacklogBytes());
        assertEquals(d.slowConsumerPolicy(), c.slowConsumerPolicy());
        assertEquals(d.shutdownGrace(), c.shutdownGrace());
        assertEquals(16, c.homeLoopMembers(), "a small topic's first 16 members share a loop");
        assertEquals(d.clientStallTimeout(), c.clientStallTimeout());
        assertEquals(Duration.ofSeconds(1), c.clientStallTimeout());
        assertEquals(20L * 1024 * 1024, c.maxClientBacklogBytes(), "twice the message limit");
    }

    @Test
    void clientStallTimeout() {
        ServerConfig c = parse("--client-stall-timeout", "250ms", "--max-message", "32MiB").toConfig();
        assertEquals(Duration.ofMillis(250), c.clientStallTimeout());
        assertEquals(64L * 1024 * 1024, c.maxClientBacklogBytes());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> parse("--client-stall-timeout", "0s").toConfig());
        assertTrue(e.getMessage().startsWith("clientStallTimeout: "), e.getMessage());
    }

    @Test
    void homeLoopMembers() {
        assertEquals(16, parse("--home-loop-members", "16").toConfig().homeLoopMembers());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> parse("--home-loop-members", "-1").toConfig());
        assertTrue(e.getMessage().startsWith("homeLoopMembers: -1"), e.getMessage());
    }

    @Test
    void flagsWithUnits() {
        ServerConfig c = parse("--listen", ":9000", "--max-message", "2MiB", "--idle-timeout", "90s",
                "--ping-interval", "45s", "--slow-consumer", "disconnect", "--subprotocol", "null,mqtt",
                "--max-client-queue", "256KiB", "--handshake-timeout", "500ms").toConfig();
        assertEquals(9000, c.listen().getPort());
        assertEquals(2 * 1024 * 1024, c.maxMessageBytes());
        assertEquals(Duration.ofSeconds(90), c.idleTimeout());
        assertEquals(SlowConsumerPolicy.DISCONNECT, c.slowConsumerPolicy());
        assertEquals(java.util.List.of("null", "mqtt"), c.subprotocols());
        assertEquals(256 * 1024, c.maxClientQueueBytes());
        assertEquals(Duration.ofMillis(500), c.handshakeTimeout());
    }

    @Test
    void httpIdleAndHealthProbeFlags() {
        ServerConfig c = parse("--http-idle-timeout", "2s", "--health-probe-interval", "200ms",
                "--health-max-probe-age", "3s").toConfig();
        assertEquals(Duration.ofSeconds(2), c.httpIdleTimeout());
        assertEquals(Duration.ofMillis(200), c.healthProbeInterval());
        assertEquals(Duration.ofSeconds(3), c.healthMaxProbeAge());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> parse("--health-probe-interval", "10s", "--health-max-probe-age", "5s").toConfig());
        assertTrue(e.getMessage().startsWith("healthMaxProbeAge: PT5S"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> parse("--http-idle-timeout", "0s").toConfig());
        assertTrue(e.getMessage().startsWith("httpIdleTimeout: "), e.getMessage());
    }

    @Test
    void invalidCombinationsNameTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> parse("--ping-interval", "60s", "--idle-timeout", "30s").toConfig());
        assertTrue(e.getMessage().startsWith("idleTimeout: PT30S"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> parse("--listen", "nowhere").toConfig());
        assertTrue(e.getMessage().contains("'nowhere'"), e.getMessage());
    }

    private static int run(StringWriter err, String... args) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        int code = Main.run(Map.of(), System.out, new java.io.PrintStream(bytes, true), args);
        err.write(bytes.toString());
        return code;
    }

    @Test
    void badSizeIsOneLine() {
        StringWriter err = new StringWriter();
        assertEquals(2, run(err, "--max-message", "lots"));
        assertEquals(1, err.toString().strip().lines().count(), err.toString());
        assertTrue(err.toString().contains("'lots'"), err.toString());
    }

    @Test
    void portInUseIsOneLineAndExitCode1() {
        try (CrossbarServer busy = CrossbarServer.start(ServerConfig.builder().listen("127.0.0.1:0").build())) {
            java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
            java.io.PrintStream old = System.err;
            System.setErr(new java.io.PrintStream(captured, true));
            int code;
            try {
                code = Main.run("--listen", "127.0.0.1:" + busy.port());
            } finally {
                System.setErr(old);
            }
            assertEquals(1, code);
            String err = captured.toString();
            // Only our own lines: a test agent (Jazzer) may write to stderr in the same JVM.
            java.util.List<String> ours = err.lines().filter(l -> !l.startsWith("INFO: ")).toList();
            assertEquals(1, ours.size(), err);
            assertTrue(ours.get(0).startsWith("crossbar: cannot listen on 127.0.0.1:" + busy.port()), err);
        }
    }

    @Test
    void sizesAndDurationsParse() {
        assertEquals(10L * 1024 * 1024, Units.parseBytes("10MiB"));
        assertEquals(512L * 1024, Units.parseBytes("512k"));
        assertEquals(123, Units.parseBytes("123"));
        assertEquals(Duration.ofMillis(250), Units.parseDuration("250ms"));
        assertEquals(Duration.ofMinutes(5), Units.parseDuration("5m"));
        assertEquals(Duration.ofSeconds(30), Units.parseDuration("PT30S"));
        assertThrows(IllegalArgumentException.class, () -> Units.parseDuration("soon"));
    }
}

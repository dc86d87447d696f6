package dev.crossbar.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.Received;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --warm-up} in the real command, in its own JVM (the JIT state is per process): the
 * warm-up runs and is reported before the relay listens, and the relay then starts with none of
 * it in its statistics; bad values are refused before anything starts.
 */
class WarmUpFlagTest {

    private static final Pattern WARMED = Pattern.compile("JIT warm-up: ([\\d,]+) messages relayed to ([\\d,]+) receivers");

    @TempDir
    Path dir;

    @Test
    void warmsUpBeforeListeningAndLeavesNoTraceInTheRelaysCounts() throws Exception {
        Path log = dir.resolve("relay.log");
        Process relay = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-cp", System.getProperty("java.class.path"), Main.class.getName(),
                "--listen", "127.0.0.1:0", "--warm-up", "500ms")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            int port = RelayLog.awaitPort(log, relay, Duration.ofSeconds(60), null);
            String out = Files.readString(log);
            Matcher warmed = WARMED.matcher(out);
            assertTrue(warmed.find(), "no warm-up line:\n" + out);
            assertTrue(Long.parseLong(warmed.group(1).replace(",", "")) > 0, out);
            assertTrue(warmed.start() < out.indexOf("Crossbar listening"), "warm-up reported after listening:\n" + out);
            assertTrue(!out.contains("ended early"), out);

            // The relay's own counts start from nothing: the warm-up had a relay of its own.
            String metrics = HttpExchange.exchange(port,
                    "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertTrue(metrics.startsWith("HTTP/1.1 200"), metrics);
            for (String line : metrics.split("\n")) {
                if (line.startsWith("crossbar_messages_in_total") || line.startsWith("crossbar_messages_out_total")) {
                    assertEquals(0.0, Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).trim()), line);
                }
            }

            // And it relays. The subscriber joins its topic just after its upgrade (on its home loop),
            // so a message sent at once may precede it: send until one arrives, within 10 s.
            NettyClient sub = NettyClient.connect(URI.create("ws://127.0.0.1:" + port + "/out/after-warm-up"));
            JdkClient pub = JdkClient.connect(URI.create("ws://127.0.0.1:" + port + "/in/after-warm-up"));
            try {
                Received got = null;
                for (int i = 0; i < 50 && got == null; i++) {
                    pub.sendText("hello");
                    got = sub.poll(Duration.ofMillis(200));
                }
                assertNotNull(got, "nothing relayed within 10 s");
                assertEquals("hello", got.string());
            } finally {
                pub.close();
                sub.close();
            }
        } finally {
            relay.destroyForcibly();
            relay.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void badValuesAreRefusedBeforeAnythingStarts() {
        assertEquals(2, Main.run("--listen", "127.0.0.1:0", "--warm-up", "6m"), "over the 5m bound");
        assertEquals(2, Main.run("--listen", "127.0.0.1:0", "--warm-up", "-1s"), "negative");
        assertEquals(2, Main.run("--listen", "127.0.0.1:0", "--warm-up", "soon"), "not a duration");
    }

    @Test
    void zeroSkipsItAndTwoSecondsIsTheDefault() {
        assertEquals(Duration.ZERO, Units.parseDuration("0"));
        CrossbarCommand cmd = new CrossbarCommand();
        new picocli.CommandLine(cmd).parseArgs();
        assertEquals(Duration.ofSeconds(2), cmd.warmUp);
    }
}

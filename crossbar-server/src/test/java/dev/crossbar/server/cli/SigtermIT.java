package dev.crossbar.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.RawClient;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real command in its own JVM, stopped the way an operator or a container runtime stops it
 * (docs/operations.md): on SIGTERM it drains, closing every client with 1012 (service restart) so that
 * it reconnects, and exits.
 * {@link Process#destroy()} sends SIGTERM on Linux.
 */
class SigtermIT {

    /** The JVM's status for an exit started by SIGTERM (128 + 15): the shutdown hook ran, then it exited. */
    private static final int EXIT_ON_SIGTERM = 143;

    @TempDir
    Path dir;

    @Test
    void sigtermClosesEveryClientWith1012AndExits() throws Exception {
        Path log = dir.resolve("relay.log");
        Process relay = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), Main.class.getName(),
                "--listen", "127.0.0.1:0", "--event-loops", "1", "--shutdown-grace", "5s")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            int port = RelayLog.awaitPort(log, relay, Duration.ofSeconds(60), null);
            String base = "ws://127.0.0.1:" + port;
            JdkClient pub = JdkClient.connect(URI.create(base + "/in/term"));
            NettyClient sub = NettyClient.connect(URI.create(base + "/out/term"));
            RawClient member = new RawClient(port);
            try {
                assertTrue(member.upgrade("/lab/term").startsWith("HTTP/1.1 101"));
                // The stream works before the signal.
                pub.sendText("before");
                assertEquals("before", sub.take(Duration.ofSeconds(10)).string());

                long start = System.nanoTime();
                relay.destroy(); // SIGTERM
                assertEquals(1012, pub.awaitClose(Duration.ofSeconds(15)), "publisher's close code");
                assertEquals(1012, sub.awaitClose(Duration.ofSeconds(15)).code(), "subscriber's close code");
                RawClient.Frame close = member.readUntilClose(15_000);
                assertTrue(close != null, "the raw member got no close frame");
                assertEquals(1012, close.closeCode(), close.closeReason());
                member.close(); // the raw client does not answer the close; it just goes, as the others did

                // Every client has gone, so the relay need not wait out its 5 s grace; the bound is generous.
                assertTrue(relay.waitFor(20, TimeUnit.SECONDS), "the relay still runs 20 s after SIGTERM:\n" + Files.readString(log));
                long tookMillis = (System.nanoTime() - start) / 1_000_000;
                int status = relay.exitValue();
                assertTrue(status == 0 || status == EXIT_ON_SIGTERM,
                        "exit status " + status + " after " + tookMillis + " ms:\n" + Files.readString(log));
                System.out.println("SIGTERM: exit status " + status + " after " + tookMillis + " ms");
                assertTrue(Files.readString(log).contains("Crossbar stopped"), Files.readString(log));
            } finally {
                pub.close();
                sub.close();
                member.close();
            }
        } finally {
            relay.destroyForcibly();
            relay.waitFor(10, TimeUnit.SECONDS);
        }
    }
}

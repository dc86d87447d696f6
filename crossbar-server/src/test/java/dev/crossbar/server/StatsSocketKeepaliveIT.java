package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.testing.StatsReader;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Keepalive on the statistics socket is as for relay connections (docs/protocol.md, /ws): a
 * reader that only reads, but answers the relay's pings, stays connected; a silent one is closed
 * with 1001 after the idle timeout.
 */
class StatsSocketKeepaliveIT {

    private static final Duration PING = Duration.ofMillis(500);
    private static final Duration IDLE = Duration.ofSeconds(2);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.pingInterval(PING).idleTimeout(IDLE)
            .statsInterval(Duration.ofMillis(500)));

    @Test
    void aReaderThatAnswersPingsIsNotIdleClosed() throws Exception {
        // The JDK client answers pings with pongs by itself and sends nothing else.
        try (JdkClient reader = JdkClient.connect(relay.ws("/ws"))) {
            await("stats socket", Duration.ofSeconds(10), () -> relay.server().stats().sockets() == 1);
            Thread.sleep(2 * IDLE.toMillis() + 1000);
            assertFalse(reader.closeCode.isDone(),
                    () -> "a reader answering pings was closed: " + reader.closeCode.join()[0] + " " + reader.closeReason.join());
            // Still served: snapshots keep coming on the interval.
            while (reader.poll(Duration.ZERO) != null) {
                // skip what arrived while we slept
            }
            assertNotNull(StatsReader.next(reader, Duration.ofSeconds(10)).get("totals"));
        }
    }

    @Test
    void aSilentReaderIsClosedWith1001() throws Exception {
        try (RawClient silent = new RawClient(relay.port())) {
            assertTrue(silent.upgrade("/ws").startsWith("HTTP/1.1 101"));
            RawClient.Frame close = silent.readUntilClose(30_000);
            assertNotNull(close, "a silent stats reader was never closed");
            assertEquals(1001, close.closeCode());
        }
    }
}

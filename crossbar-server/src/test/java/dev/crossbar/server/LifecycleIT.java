package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.RelayServerExtension;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How connections end: nothing follows a close frame, even on a busy topic. (The keepalive, the
 * same for relay sessions and the statistics socket, is tested in {@link HostileInputIT} and
 * {@link StatsSocketKeepaliveIT}.)
 */
class LifecycleIT {

    private static final int MAX_MESSAGE = 64 * 1024;

    @Nested
    class Closing {

        @RegisterExtension
        // A queue bound far above what the test sends: every delivery after the close frame would
        // be written, none dropped as over the bound.
        final RelayServerExtension relay = new RelayServerExtension(b -> b.maxMessageBytes(MAX_MESSAGE)
                .maxClientQueueBytes(256 * 1024 * 1024));

        @Test
        void nothingFollowsTheCloseFrameOnABusyTopic() throws Exception {
            try (RawClient member = new RawClient(relay.port());
                 JdkClient sender = JdkClient.connect(relay.ws("/lab/busy"))) {
                assertTrue(member.upgrade("/lab/busy").startsWith("HTTP/1.1 101"));
                await("both members joined", Duration.ofSeconds(10), () -> relay.server().topics().topics().stream()
                        .mapToInt(t -> t.members().length).sum() == 2);
                // Fill the member's socket and the relay's outbound buffer for it: it is not reading.
                byte[] chunk = new byte[8 * 1024];
                for (int i = 0; i < 1500; i++) {
                    sender.sendBinary(chunk);
                }
                // A fragmented message over the limit: the relay starts the closing handshake (1009)
                // behind the data queued for this member.
                member.send(RawClient.frame(0x02, new byte[MAX_MESSAGE / 2 + 1], true));
                member.send(RawClient.frame(0x80, new byte[MAX_MESSAGE / 2 + 1], true));
                // The topic stays busy after the close frame was queued.
                CompletableFuture<Void> more = CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < 200; i++) {
                        sender.sendBinary(chunk);
                    }
                });

                RawClient.Frame close = member.readUntilClose(20_000);
                assertNotNull(close, "the close frame never arrived: the socket was closed under it");
                assertEquals(1009, close.closeCode(), close.closeReason());
                // Nothing after the close frame: the relay closes the socket (its timer; this client
                // does not answer).
                assertNull(member.readFrame(10_000), "a frame followed the close frame");
                assertTrue(member.closedByPeer(5000), "the relay did not close the socket");
                more.get(30, TimeUnit.SECONDS);
                assertFalse(sender.closeCode.isDone(), "the sender was not disturbed");
            }
        }
    }
}

package dev.crossbar.server.pair;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.Received;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.testing.SessionHost;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import java.net.URI;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A session never drops a byte: with a client that does not read, the relay stops reading the host,
 * the host (whose echo waits for its send) stops reading, and the relay stops reading the client, so
 * what the client sends waits in the client, not in the relay. Home loop off, so the two ends of a
 * session may sit on different event loops.
 */
class SessionBackPressureIT {

    static final Duration WAIT = Duration.ofSeconds(60);
    static final int MESSAGE = 256 * 1024;
    static final int MESSAGES = 128;

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .homeLoopMembers(0)
            .routing(new RoutingTable(RoutingTable.parseAll(List.of("/shell/*:schema=session")))));

    @Test
    void aClientThatDoesNotReadHoldsItsOwnSenderBackAndLosesNothing() throws Exception {
        try (SessionHost host = new SessionHost(relay.ws("/in/shell/x"), URI.create("ws://127.0.0.1:" + relay.port()))) {
            RelayServerExtension.await("host", WAIT, () -> relay.server().pairs().hosts() == 1);
            NettyClient client = NettyClient.connect(relay.ws("/out/shell/x"));
            client.channel.config().setAutoRead(false);
            host.awaitSession(0, WAIT);
            RelayServerExtension.await("paired", WAIT, () -> relay.server().pairs().open() == 1);
            Random random = new Random(7);
            MessageDigest sent = MessageDigest.getInstance("SHA-256");
            client.channel.eventLoop().submit(() -> {
                for (int i = 0; i < MESSAGES; i++) {
                    byte[] m = new byte[MESSAGE];
                    random.nextBytes(m);
                    sent.update(m);
                    client.write(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(m)));
                }
                client.flush();
            }).sync();
            long total = (long) MESSAGE * MESSAGES;
            // What the relay holds is a high water mark per side; the sockets' buffers on the way
            // (four connections, each autotuned by the kernel: up to 32 MiB to receive on CI's
            // machines) held up to 17 MB of the 32 in one CI run. A relay that did not stop reading
            // would leave nothing waiting in the client, so a quarter still tells the two apart.
            Thread.sleep(2000);
            long waiting = client.channel.eventLoop().submit(() -> {
                ChannelOutboundBuffer out = client.channel.unsafe().outboundBuffer();
                return out == null ? 0L : out.totalPendingWriteBytes();
            }).get();
            assertTrue(waiting > total / 4, "the relay stopped reading the client: " + waiting + " of " + total
                    + " bytes still wait in the client");
            client.channel.config().setAutoRead(true);
            MessageDigest got = MessageDigest.getInstance("SHA-256");
            for (int i = 0; i < MESSAGES; i++) {
                Received r = client.take(WAIT);
                assertEquals(MESSAGE, r.data().length);
                got.update(r.data());
            }
            assertArrayEquals(sent.digest(), got.digest(), "every byte came back, in order");
            client.close();
        }
    }
}

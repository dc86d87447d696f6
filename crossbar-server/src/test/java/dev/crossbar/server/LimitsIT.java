package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.RelayServerExtension;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Over-limit input closes only the offending client, with the documented code and a reason. */
class LimitsIT {

    private static final int MAX = 64 * 1024;

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.maxMessageBytes(MAX));

    private void awaitMembers(int n) {
        await(n + " members", Duration.ofSeconds(5), () -> relay.server().topics().topics().stream()
                .mapToInt(t -> t.members().length).sum() == n);
    }

    @Test
    void messageOverTheLimitClosesTheSenderWith1009AndOthersCarryOn() throws Exception {
        try (NettyClient offender = NettyClient.connect(relay.ws("/room"));
             JdkClient publisher = JdkClient.connect(relay.ws("/room"));
             JdkClient healthy = JdkClient.connect(relay.ws("/room"))) {
            awaitMembers(3);
            offender.sendBinary(new byte[MAX]);
            assertEquals(MAX, healthy.take().data().length, "a message at the limit is relayed");
            offender.sendBinary(new byte[MAX + 1]);
            NettyClient.CloseInfo close = offender.awaitClose(Duration.ofSeconds(5));
            assertEquals(1009, close.code());
            assertTrue(!close.reason().isBlank(), "close carries a reason");

            publisher.sendText("still here");
            assertEquals("still here", healthy.take().string());
            assertEquals(null, healthy.poll(Duration.ofMillis(200)), "nothing of the oversized message leaked out");
        }
    }

    @Test
    void fragmentedMessageOverTheLimitClosesWith1009() {
        try (NettyClient offender = NettyClient.connect(relay.ws("/in/f"));
             JdkClient healthy = JdkClient.connect(relay.ws("/out/f"))) {
            awaitMembers(2);
            offender.sendFragmented(false, new byte[MAX], 8);
            assertEquals(MAX, healthy.take().data().length);
            offender.sendFragmented(false, new byte[MAX + 10], 8);
            NettyClient.CloseInfo close = offender.awaitClose(Duration.ofSeconds(5));
            assertEquals(1009, close.code());
            assertTrue(close.reason().contains(String.valueOf(MAX)), close.reason());
        }
    }

    /**
     * A whole message sent after a fragmented one went past the limit (1009) is dropped: the
     * reader passes nothing on after it fails a connection.
     */
    @Test
    void aWholeMessageSentAfterAFailedFragmentedOneIsNotRelayed() throws Exception {
        try (NettyClient offender = NettyClient.connect(relay.ws("/in/g"));
             JdkClient healthy = JdkClient.connect(relay.ws("/out/g"))) {
            awaitMembers(2);
            offender.sendBinary(new byte[] {1});
            assertEquals(1, healthy.take().data().length, "the first message, after which the direct path is taken");
            // One flush for both, so the whole message arrives right behind the failed one: sent
            // after it, it could find the connection already closed, and test nothing.
            offender.writeFragmented(false, new byte[MAX + 10], 8);
            offender.write(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(new byte[] {2, 2})));
            offender.flush();
            NettyClient.CloseInfo close = offender.awaitClose(Duration.ofSeconds(5));
            assertEquals(1009, close.code());
            assertEquals(null, healthy.poll(Duration.ofMillis(500)), "nothing after the failed message is relayed");
        }
    }
}

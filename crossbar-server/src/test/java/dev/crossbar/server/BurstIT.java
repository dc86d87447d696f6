package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.Received;
import dev.crossbar.server.testing.RelayServerExtension;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One message in is one message out, even under a burst: 10,000 messages of distinct lengths,
 * written as fast as the sender can, arrive at each receiver unmerged, unsplit and in order.
 */
class BurstIT {

    private static final int COUNT = 10_000;

    /**
     * A queue large enough for the whole burst, and idle timers longer than the test: this test is
     * about boundaries, not slow consumers. (A pure receiver sends nothing, so on a busy machine the
     * relay's ping could wait behind a 50 MB backlog past the default idle timeout.)
     */
    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.maxClientQueueBytes(128 * 1024 * 1024)
            .pingInterval(java.time.Duration.ofMinutes(5)).idleTimeout(java.time.Duration.ofMinutes(10)));

    /** Message i has length i + 1: its first bytes carry i, the rest a pattern derived from i. */
    static byte[] message(int i) {
        byte[] m = new byte[i + 1];
        for (int k = 0; k < m.length; k++) {
            m[k] = (byte) (i * 31 + k);
        }
        if (m.length >= 4) {
            m[0] = (byte) (i >>> 24);
            m[1] = (byte) (i >>> 16);
            m[2] = (byte) (i >>> 8);
            m[3] = (byte) i;
        }
        return m;
    }

    static void check(int i, Received r) {
        assertFalse(r.text(), "message " + i + " changed type");
        byte[] expected = message(i);
        assertEquals(expected.length, r.data().length, "message " + i + " merged or split");
        if (!java.util.Arrays.equals(expected, r.data())) {
            throw new AssertionError("message " + i + " corrupted or out of order");
        }
    }

    /** Until the one topic has all three clients: a message sent before would miss a receiver. */
    private void awaitThreeMembers() {
        await("3 members", Duration.ofSeconds(5), () -> relay.server().topics().size() == 1
                && relay.server().topics().topics().iterator().next().members().length == 3);
    }

    @Test
    void burstOfDistinctLengthsArrivesExactlyAtEveryReceiver() {
        try (NettyClient sender = NettyClient.connect(relay.ws("/in/burst"));
             JdkClient jdk = JdkClient.connect(relay.ws("/out/burst"));
             NettyClient netty = NettyClient.connect(relay.ws("/out/burst"))) {
            awaitThreeMembers();
            for (int i = 0; i < COUNT; i++) {
                sender.write(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(message(i))));
                if (i % 64 == 0) {
                    sender.flush();
                }
            }
            sender.flush();
            for (int i = 0; i < COUNT; i++) {
                check(i, netty.take(Duration.ofSeconds(60)));
            }
            for (int i = 0; i < COUNT; i++) {
                check(i, jdk.take(Duration.ofSeconds(60)));
            }
            var totals = relay.server().topics().topics().iterator().next().totals();
            assertEquals(0, totals[4], "no drops");
        }
    }

    /**
     * Small frames written in one go are copied into one buffer per receiver, larger ones written
     * on their own: interleaved in one burst, text and binary, empty and up to twice the copy
     * limit, every message still arrives alone, with its type, in order.
     */
    @Test
    void smallAndLargeMessagesInterleavedKeepTheirOrderAndType() {
        int n = 3_000;
        try (NettyClient sender = NettyClient.connect(relay.ws("/in/mixed"));
             JdkClient jdk = JdkClient.connect(relay.ws("/out/mixed"));
             NettyClient netty = NettyClient.connect(relay.ws("/out/mixed"))) {
            awaitThreeMembers();
            for (int i = 0; i < n; i++) {
                byte[] m = mixed(i);
                sender.write(i % 2 == 0 ? new TextWebSocketFrame(Unpooled.wrappedBuffer(m))
                        : new BinaryWebSocketFrame(Unpooled.wrappedBuffer(m)));
                if (i % 100 == 99) {
                    sender.flush();
                }
            }
            sender.flush();
            checkTextAndBinaryInTurn(List.of(() -> netty.take(Duration.ofSeconds(30)),
                    () -> jdk.take(Duration.ofSeconds(30))), n, BurstIT::mixed);
        }
    }

    /**
     * A 1:N stream's subscribers past the first are written by the loop other than the
     * publisher's, where a burst reaches them as runs of messages copied into one buffer: each
     * message still arrives alone, with its type, in order, whatever its size (up to 70,000 bytes,
     * past the largest a run takes) and whichever client reads it.
     */
    @Test
    void aBurstToManyReceiversArrivesExactlyAtEach() {
        int n = 2_000;
        List<JdkClient> jdks = new ArrayList<>();
        List<NettyClient> nettys = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                jdks.add(JdkClient.connect(relay.ws("/out/wide")));
                nettys.add(NettyClient.connect(relay.ws("/out/wide"), 1 << 20));
            }
            try (NettyClient sender = NettyClient.connect(relay.ws("/in/wide"), 1 << 20)) {
                await("7 members", Duration.ofSeconds(5), () -> relay.server().topics().topics().stream()
                        .anyMatch(t -> t.members().length == 7));
                for (int i = 0; i < n; i++) {
                    byte[] m = sized(i);
                    sender.write(i % 2 == 0 ? new TextWebSocketFrame(Unpooled.wrappedBuffer(m))
                            : new BinaryWebSocketFrame(Unpooled.wrappedBuffer(m)));
                    if (i % 50 == 49) {
                        sender.flush();
                    }
                }
                sender.flush();
                List<Supplier<Received>> receivers = new ArrayList<>();
                nettys.forEach(c -> receivers.add(() -> c.take(Duration.ofSeconds(30))));
                jdks.forEach(c -> receivers.add(() -> c.take(Duration.ofSeconds(30))));
                checkTextAndBinaryInTurn(receivers, n, BurstIT::sized);
            }
        } finally {
            jdks.forEach(JdkClient::close);
            nettys.forEach(NettyClient::close);
        }
    }

    /** Lengths 0 to 9,000 bytes, and every 97th 70,000; ASCII, so valid as text too. */
    private static byte[] sized(int i) {
        int length = i % 97 == 96 ? 70_000 : (i * 1_237) % 9_001;
        byte[] m = new byte[length];
        for (int k = 0; k < length; k++) {
            m[k] = (byte) ('a' + (i + k) % 26);
        }
        return m;
    }

    /**
     * Each receiver gets messages 0 to n - 1, even ones as text and odd ones as binary, each alone
     * and exactly as {@code message} makes it.
     */
    private static void checkTextAndBinaryInTurn(List<Supplier<Received>> receivers, int n, IntFunction<byte[]> message) {
        for (Supplier<Received> receiver : receivers) {
            for (int i = 0; i < n; i++) {
                Received r = receiver.get();
                assertEquals(i % 2 == 0, r.text(), "message " + i + " changed type");
                byte[] expected = message.apply(i);
                if (!java.util.Arrays.equals(expected, r.data())) {
                    throw new AssertionError("message " + i + " (" + expected.length + " bytes) arrived as "
                            + r.data().length + " bytes: merged, split, corrupted or out of order");
                }
            }
        }
    }

    /** Lengths 0 to 2,100 bytes, small and large in turn; ASCII, so valid as text too. */
    private static byte[] mixed(int i) {
        int length = i % 3 == 0 ? i % 7 : i % 3 == 1 ? 1_000 + i % 1_100 : 100 + i % 50;
        byte[] m = new byte[length];
        for (int k = 0; k < length; k++) {
            m[k] = (byte) ('a' + (i + k) % 26);
        }
        return m;
    }

    @Test
    void manyToManyBurstFromTwoSendersKeepsEachSendersOrder() {
        try (NettyClient a = NettyClient.connect(relay.ws("/mesh"));
             NettyClient b = NettyClient.connect(relay.ws("/mesh"));
             JdkClient c = JdkClient.connect(relay.ws("/mesh"))) {
            awaitThreeMembers();
            int n = 2_000;
            for (int i = 0; i < n; i++) {
                a.write(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(message(2 * i))));
                b.write(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(message(2 * i + 1))));
            }
            a.flush();
            b.flush();
            int nextEven = 0;
            int nextOdd = 1;
            for (int k = 0; k < 2 * n; k++) {
                Received r = c.take(Duration.ofSeconds(30));
                int i = r.data().length - 1;
                if (i % 2 == 0) {
                    check(nextEven, r);
                    nextEven += 2;
                } else {
                    check(nextOdd, r);
                    nextOdd += 2;
                }
            }
            for (int k = 0; k < n; k++) {
                check(2 * k + 1, a.take(Duration.ofSeconds(30)));
                check(2 * k, b.take(Duration.ofSeconds(30)));
            }
        }
    }
}

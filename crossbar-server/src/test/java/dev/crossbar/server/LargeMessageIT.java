package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.crossbar.core.relay.Member;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.Received;
import dev.crossbar.server.testing.RelayServerExtension;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Large messages at the default limits: a reader that keeps up loses nothing, however many 1 MiB
 * messages are in flight to it (up to twice the message limit), while a stalled reader is still
 * held to its queue bound (see {@link SlowConsumerIT}).
 */
class LargeMessageIT {

    private static final int MESSAGE = 1024 * 1024;
    private static final int MESSAGES = 32;
    private static final int IN_FLIGHT = 8;

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension();

    private static byte[] message(int i) {
        byte[] b = new byte[MESSAGE];
        Arrays.fill(b, (byte) i);
        b[0] = (byte) (i >> 8);
        b[MESSAGE - 1] = (byte) (i * 7);
        return b;
    }

    @Test
    void readerThatKeepsUpLosesNoneWithEightInFlight() throws Exception {
        try (JdkClient pub = JdkClient.connect(relay.ws("/in/stills"));
             JdkClient sub = JdkClient.connect(relay.ws("/out/stills"))) {
            await("both joined", Duration.ofSeconds(10), () -> relay.server().topics().topics().stream()
                    .mapToInt(t -> t.members().length).sum() == 2);
            AtomicInteger received = new AtomicInteger();
            CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < MESSAGES; i++) {
                    Received r = sub.take(Duration.ofSeconds(30));
                    assertFalse(r.text());
                    assertArrayEquals(message(i), r.data(), "message " + i);
                    received.incrementAndGet();
                }
            });
            for (int i = 0; i < MESSAGES; i++) {
                int sent = i;
                // At most IN_FLIGHT messages sent and not yet read, as a windowed sender has.
                await("window opens", Duration.ofSeconds(30), () -> sent - received.get() < IN_FLIGHT || reader.isDone());
                pub.sendBinary(message(i));
            }
            reader.get(60, TimeUnit.SECONDS);
            for (Member m : relay.server().topics().topics().iterator().next().members()) {
                assertEquals(0, m.stats().dropped(), "dropped for " + m.route().path());
            }
        }
    }
}

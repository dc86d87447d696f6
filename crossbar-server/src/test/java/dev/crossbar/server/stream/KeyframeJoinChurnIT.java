package dev.crossbar.server.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.RelayServerExtension;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Viewers joining a {@code start=keyframe} stream again and again while it flows: each join's
 * replay (the messages since the last keyframe, written the moment the viewer joins) races the
 * live messages on two event loops, and viewers that pause make the relay's writes partial. Every
 * viewer's first message must begin at a keyframe and every later one must be one of the
 * publisher's messages, whole: nothing merged, cut or garbled.
 *
 * <p>Read by two independent clients: Netty's, and a raw socket taking frames off the wire (some
 * pausing as they read). Not by the JDK's client: it garbles what follows its first read buffer
 * when that read also held the handshake's response, which is what a replay makes likely (see
 * {@link JdkClient}).
 */
class KeyframeJoinChurnIT {

    /** 8 s in the build; {@code -Dcrossbar.churnSeconds=N} for a longer soak. */
    private static final Duration RUN = Duration.ofSeconds(Long.getLong("crossbar.churnSeconds", 8));
    private static final int READ_TIMEOUT_MILLIS = 10_000;

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .routing(new RoutingTable(RoutingTable.parseAll(List.of("/cam/**:start=keyframe")))));

    private final List<byte[]> chunks = TsStream.chunks(TsStream.fixture("mpeg1-g60.ts"), 4096);
    private final Map<Integer, List<byte[]>> byHash = new HashMap<>();
    private final ConcurrentLinkedQueue<String> faults = new ConcurrentLinkedQueue<>();
    private final AtomicInteger joins = new AtomicInteger();
    private final AtomicInteger checked = new AtomicInteger();

    @Test
    void everyViewerGetsAKeyframeFirstThenWholeMessages() throws Exception {
        for (byte[] c : chunks) {
            byHash.computeIfAbsent(Arrays.hashCode(c), h -> new ArrayList<>()).add(c);
        }
        AtomicBoolean publishing = new AtomicBoolean(true);
        AtomicBoolean viewing = new AtomicBoolean(true);
        CountDownLatch keyframesSent = new CountDownLatch(1);
        Thread publisher = new Thread(() -> {
            try (JdkClient cam = JdkClient.connect(relay.ws("/in/cam/1"))) {
                for (long i = 0; publishing.get(); i++) {
                    cam.sendBinary(chunks.get((int) (i % chunks.size())));
                    if (i == chunks.size()) {
                        keyframesSent.countDown(); // every keyframe of the fixture has gone by once
                    }
                    if (i % 4 == 3) {
                        // At most four a millisecond (~130 Mbit/s): many live messages for each replay to race.
                        Thread.sleep(1);
                    }
                }
            } catch (Exception e) {
                faults.add("publisher: " + e);
            }
        }, "publisher");
        publisher.start();
        assertTrue(keyframesSent.await(20, TimeUnit.SECONDS), "publisher got going");

        List<Thread> viewers = new ArrayList<>();
        viewers.add(viewer("netty", viewing, this::nettyViewer));
        viewers.add(viewer("netty-2", viewing, this::nettyViewer));
        viewers.add(viewer("raw", viewing, () -> rawViewer(false)));
        viewers.add(viewer("raw-pausing", viewing, () -> rawViewer(true)));
        long end = System.nanoTime() + RUN.toNanos();
        while (System.nanoTime() < end && faults.isEmpty()) {
            Thread.sleep(50);
        }
        viewing.set(false);
        for (Thread t : viewers) {
            t.join(2L * READ_TIMEOUT_MILLIS);
        }
        publishing.set(false);
        publisher.join(READ_TIMEOUT_MILLIS);

        assertEquals(List.of(), List.copyOf(faults));
        assertTrue(joins.get() >= 20, "joins: " + joins);
        assertTrue(checked.get() >= 5 * joins.get(), "messages checked: " + checked + " in " + joins + " joins");
    }

    private interface Join {
        void run() throws Exception;
    }

    private Thread viewer(String name, AtomicBoolean viewing, Join join) {
        Thread t = new Thread(() -> {
            while (viewing.get() && faults.isEmpty()) {
                try {
                    join.run();
                    joins.incrementAndGet();
                } catch (Exception | AssertionError e) {
                    faults.add(name + ": " + e);
                }
            }
        }, name);
        t.start();
        return t;
    }

    private void nettyViewer() {
        try (NettyClient viewer = NettyClient.connect(relay.ws("/out/cam/1"))) {
            int want = ThreadLocalRandom.current().nextInt(5, 60);
            StringBuilder seen = new StringBuilder();
            for (int n = 0; n < want; n++) {
                var r = viewer.take(Duration.ofMillis(READ_TIMEOUT_MILLIS));
                if (r.text() || !check(r.data(), n, seen)) {
                    faults.add("netty: message " + n + (r.text() ? " is text" : " is not the publisher's")
                            + "; seen" + seen);
                    return;
                }
            }
        }
    }

    private void rawViewer(boolean pausing) throws IOException, InterruptedException {
        try (RawClient viewer = new RawClient(relay.port())) {
            String head = viewer.upgrade("/out/cam/1");
            if (!head.startsWith("HTTP/1.1 101")) {
                faults.add("raw: upgrade refused: " + head);
                return;
            }
            int want = ThreadLocalRandom.current().nextInt(5, 60);
            StringBuilder seen = new StringBuilder();
            for (int n = 0; n < want; n++) {
                RawClient.Frame f = viewer.readFrame(READ_TIMEOUT_MILLIS);
                if (f == null || f.opcode() != 0x2 || !f.fin() || !check(f.payload(), n, seen)) {
                    faults.add("raw: frame " + n
                            + (f == null ? " never came" : " opcode " + f.opcode() + " fin " + f.fin()) + "; seen" + seen);
                    return;
                }
                if (pausing && ThreadLocalRandom.current().nextInt(8) == 0) {
                    Thread.sleep(2); // its socket fills meanwhile: the relay's next writes are partial
                }
            }
        }
    }

    /**
     * The first message is a keyframe's packets to the end of one of the publisher's messages; each
     * later one is a whole message of the publisher's. Records what was seen, for a failure message.
     */
    private boolean check(byte[] m, int index, StringBuilder seen) {
        seen.append(' ').append(m.length);
        boolean ok;
        if (index == 0) {
            ok = TsStream.isRandomAccess(m, 0) && chunks.stream().anyMatch(c ->
                    c.length >= m.length && Arrays.equals(c, c.length - m.length, c.length, m, 0, m.length));
        } else {
            ok = byHash.getOrDefault(Arrays.hashCode(m), List.of()).stream().anyMatch(c -> Arrays.equals(c, m));
        }
        if (ok) {
            checked.incrementAndGet();
        } else {
            seen.append('?');
        }
        return ok;
    }
}

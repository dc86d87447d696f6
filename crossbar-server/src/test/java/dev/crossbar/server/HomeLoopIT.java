package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.relay.Member;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.RelayServerExtension;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A small topic's connections are moved onto one event loop before the 101; a big one's further
 * members stay spread; a 1:N stream's publisher and first subscriber share its home loop and the
 * other subscribers go to the other loops; nothing sent during the move is lost, and the idle timer
 * works after it. Four loops, so that round-robin alone would spread every topic.
 */
class HomeLoopIT {

    private static final int LOOPS = 4;
    private static final int SHARE = 16;

    private static Topic awaitTopic(RelayServerExtension relay, String name, int members) {
        await(members + " members on " + name, Duration.ofSeconds(5), () -> relay.server().topics().topics().stream()
                .anyMatch(t -> t.key().name().equals(name) && t.members().length == members));
        return relay.server().topics().topics().stream().filter(t -> t.key().name().equals(name)).findFirst()
                .orElseThrow();
    }

    private static Map<EventExecutor, Integer> perLoop(Topic topic) {
        Map<EventExecutor, Integer> perLoop = new HashMap<>();
        for (Member m : topic.members()) {
            perLoop.merge(m.executor(), 1, Integer::sum);
        }
        return perLoop;
    }

    /** Connects one at a time, each placed before the next, so where each goes is decided. */
    private static List<JdkClient> connectInTurn(RelayServerExtension relay, String path, String topic, int n,
                                                 int membersBefore) {
        List<JdkClient> clients = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            clients.add(JdkClient.connect(relay.ws(path)));
            awaitTopic(relay, topic, membersBefore + i + 1);
        }
        return clients;
    }

    private static Set<EventExecutor> loopsOf(Topic topic) {
        Set<EventExecutor> loops = new HashSet<>();
        for (Member m : topic.members()) {
            loops.add(m.executor());
        }
        return loops;
    }

    private static List<JdkClient> connect(RelayServerExtension relay, String path, int n) {
        List<JdkClient> clients = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            clients.add(JdkClient.connect(relay.ws(path)));
        }
        return clients;
    }

    private static void closeAll(List<JdkClient> clients) {
        for (JdkClient c : clients) {
            c.close();
        }
    }

    @Nested
    class On {
        @RegisterExtension
        final RelayServerExtension relay = new RelayServerExtension(b -> b.eventLoops(LOOPS).homeLoopMembers(SHARE)
                .pingInterval(Duration.ofMillis(300)).idleTimeout(Duration.ofMillis(900)));

        @Test
        void aSmallTopicSharesOneLoop() {
            List<JdkClient> mesh = connect(relay, "/lab/mesh", 6);
            List<JdkClient> stream = new ArrayList<>(connect(relay, "/in/pair", 1));
            stream.addAll(connect(relay, "/out/pair", 1));
            try {
                assertEquals(1, loopsOf(awaitTopic(relay, "/lab/mesh", 6)).size(), "N:N topic on one loop");
                assertEquals(1, loopsOf(awaitTopic(relay, "pair", 2)).size(), "publisher and its one subscriber on one loop");
            } finally {
                closeAll(mesh);
                closeAll(stream);
            }
        }

        @Test
        void aViewerThatHasItsUpgradeGetsTheNextMessage() throws IOException {
            // The camera waits on the stream's home loop; each viewer is accepted on another loop in
            // turn and moved. Once a viewer has its 101 it is a member: the frame the camera sends
            // the moment the 101 arrives reaches it (when the move came after the 101, the camera's
            // loop could relay that frame before the viewer had joined). Plain sockets, so that
            // nothing but the network stands between the 101 and the frame.
            for (int i = 0; i < 8 * LOOPS; i++) {
                String topic = "first-" + i;
                byte[] payload = ByteBuffer.allocate(4).putInt(i).array();
                try (RawClient camera = new RawClient(relay.port()); RawClient viewer = new RawClient(relay.port())) {
                    assertTrue(camera.upgrade("/in/" + topic).startsWith("HTTP/1.1 101"));
                    awaitTopic(relay, topic, 1);
                    assertTrue(viewer.upgrade("/out/" + topic).startsWith("HTTP/1.1 101"));
                    camera.send(RawClient.frame(0x82, payload, true));
                    RawClient.Frame f = viewer.readFrame(5_000);
                    while (f != null && f.opcode() == 0x9) { // the relay's pings of a quiet client (every 300 ms here)
                        f = viewer.readFrame(5_000);
                    }
                    assertNotNull(f, "viewer " + i + " of " + topic + " got nothing");
                    assertEquals(0x2, f.opcode(), "viewer " + i + " of " + topic);
                    assertArrayEquals(payload, f.payload(), "viewer " + i + " of " + topic);
                }
            }
        }

        @Test
        void nothingSentRightAfterTheUpgradeIsLostOrReordered() {
            List<JdkClient> clients = new ArrayList<>(connect(relay, "/lab/early", 1));
            try {
                JdkClient first = clients.get(0);
                awaitTopic(relay, "/lab/early", 1);
                // Each newcomer sends as soon as its upgrade is answered, while the relay may be moving it.
                int senders = LOOPS;
                int each = 200;
                for (int s = 0; s < senders; s++) {
                    JdkClient c = JdkClient.connect(relay.ws("/lab/early"));
                    clients.add(c);
                    for (int i = 0; i < each; i++) {
                        c.sendBinary(ByteBuffer.allocate(8).putInt(s).putInt(i).array());
                    }
                }
                Map<Integer, Integer> next = new HashMap<>();
                for (int n = 0; n < senders * each; n++) {
                    ByteBuffer m = ByteBuffer.wrap(first.take(Duration.ofSeconds(10)).data());
                    int sender = m.getInt();
                    int seq = m.getInt();
                    assertEquals(next.getOrDefault(sender, 0), seq, "sender " + sender + " out of order or lost");
                    next.put(sender, seq + 1);
                }
                assertEquals(1, loopsOf(awaitTopic(relay, "/lab/early", senders + 1)).size());
            } finally {
                closeAll(clients);
            }
        }

        @Test
        void theIdleTimerRunsOnTheNewLoop() throws Exception {
            // Several silent clients, so that some are moved: each is pinged, then closed as idle.
            List<RawClient> silent = new ArrayList<>();
            try {
                for (int i = 0; i < LOOPS; i++) {
                    RawClient c = new RawClient(relay.port());
                    silent.add(c);
                    assertTrue(c.upgrade("/lab/quiet").startsWith("HTTP/1.1 101"));
                }
                for (RawClient c : silent) {
                    RawClient.Frame ping = c.readFrame(2000);
                    assertNotNull(ping, "expected a ping");
                    assertEquals(0x9, ping.opcode());
                    RawClient.Frame close = c.readUntilClose(3000);
                    assertNotNull(close, "silent client was never closed");
                    assertEquals(1001, close.closeCode());
                }
            } finally {
                for (RawClient c : silent) {
                    c.close();
                }
            }
        }

        @Test
        void aBigTopicKeepsItsFirstMembersHomeAndEvensOutTheRest() {
            // A share of 16; 24 members of an N:N topic, connected one at a time.
            List<JdkClient> clients = connectInTurn(relay, "/lab/big", "/lab/big", 24, 0);
            try {
                Topic topic = awaitTopic(relay, "/lab/big", 24);
                Map<EventExecutor, Integer> perLoop = perLoop(topic);
                int home = perLoop.values().stream().mapToInt(Integer::intValue).max().orElse(0);
                assertEquals(16, home, "the home loop holds the first 16, no more: " + perLoop.values());
                // The 8 past the share go to the least-used loops: 3, 3 and 2 on the other three.
                assertEquals(LOOPS, perLoop.size(), "members past 16 spread: " + perLoop.values());
                int fewest = perLoop.values().stream().mapToInt(Integer::intValue).min().orElse(0);
                assertEquals(2, fewest, "evenly: " + perLoop.values());
            } finally {
                closeAll(clients);
            }
        }
    }

    @Nested
    class StreamsPlacedLikeAnyTopic {
        @RegisterExtension
        final RelayServerExtension relay = new RelayServerExtension(b -> b.eventLoops(LOOPS));

        @Test
        void aSmallStreamSharesOneLoop() {
            List<JdkClient> stream = new ArrayList<>(connect(relay, "/in/cam", 1));
            stream.addAll(connect(relay, "/out/cam", 5));
            try {
                assertEquals(1, loopsOf(awaitTopic(relay, "cam", 6)).size(), "publisher and subscribers on one loop");
            } finally {
                closeAll(stream);
            }
        }
    }

    @Nested
    class Off {
        @RegisterExtension
        final RelayServerExtension relay = new RelayServerExtension(b -> b.eventLoops(LOOPS).homeLoopMembers(0));

        @Test
        void connectionsStayWhereTheyWereAccepted() {
            List<JdkClient> mesh = connect(relay, "/lab/mesh", 6);
            try {
                assertTrue(loopsOf(awaitTopic(relay, "/lab/mesh", 6)).size() > 1, "round-robin spreads them");
            } finally {
                closeAll(mesh);
            }
        }
    }
}

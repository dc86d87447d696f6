package dev.crossbar.server.pair;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.server.config.SessionConfig;
import dev.crossbar.server.testing.CrossbarCluster;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.Received;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.testing.SessionHost;
import java.net.URI;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sessions across nodes of a NATS cluster: a client on node 0, its stream's only host on node 1. The
 * offer reaches the host through NATS and names node 0's address; the host opens the session there,
 * and the bytes flow on node 0 alone. The host's departure, announced through NATS, closes the client.
 */
class SessionClusterIT {

    static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    @Test
    void aClientOnOneNodeIsServedByAHostOnAnother() throws Exception {
        try (CrossbarCluster cluster = CrossbarCluster.start(dir, (i, b) -> b
                .routing(new RoutingTable(RoutingTable.parseAll(List.of("/shell/*:schema=session")))))) {
            SessionHost host = new SessionHost(cluster.ws(1, "/in/shell/exp1"),
                    URI.create("ws://127.0.0.1:" + cluster.node(1).port()));
            RelayServerExtension.await("host on node 1", WAIT, () -> cluster.node(1).pairs().hosts() == 1);
            // The host's node takes part in the stream's offers once its subscription reaches the cluster.
            JdkClient client = connectServed(cluster);
            JsonNode offer = host.offers.peek();
            assertEquals("ws://127.0.0.1:" + cluster.node(0).port() + offer.get("session").asText(),
                    offer.get("url").asText(), "opened on the client's node");
            RelayServerExtension.await("paired on node 0", WAIT, () -> cluster.node(0).pairs().open() == 1);
            assertEquals(0, cluster.node(1).pairs().open());

            Random random = new Random(3);
            MessageDigest sent = MessageDigest.getInstance("SHA-256");
            MessageDigest got = MessageDigest.getInstance("SHA-256");
            for (int i = 0; i < 16; i++) {
                byte[] m = new byte[64 * 1024 + i];
                random.nextBytes(m);
                sent.update(m);
                client.sendBinary(m);
                Received r = client.take(WAIT);
                assertEquals(m.length, r.data().length);
                got.update(r.data());
            }
            assertArrayEquals(sent.digest(), got.digest());

            host.control.ws.abort();
            assertEquals(1001, client.awaitClose(WAIT));
            assertEquals("host went away", client.closeReason.join());
            client.close();
            host.close();
        }
    }

    @Test
    void withNoHostAnywhereTheClientIsClosedWithTryAgainLater() throws Exception {
        try (CrossbarCluster cluster = CrossbarCluster.start(dir, (i, b) -> b
                .routing(new RoutingTable(RoutingTable.parseAll(List.of("/shell/*:schema=session"))))
                .sessions(new SessionConfig(Duration.ofSeconds(2), 16)))) {
            try (JdkClient client = JdkClient.connect(cluster.ws(0, "/out/shell/none"))) {
                assertEquals(1013, client.awaitClose(WAIT));
                assertEquals("no host on /shell/none; try again later", client.closeReason.join());
            }
        }
    }

    /** Connects clients on node 0 until one is served (the host node's offer subscription may lag). */
    private static JdkClient connectServed(CrossbarCluster cluster) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            JdkClient c = JdkClient.connect(cluster.ws(0, "/out/shell/exp1"));
            c.sendText("hello");
            Received r = c.poll(Duration.ofSeconds(5));
            if (r != null) {
                assertTrue(r.text());
                assertEquals("hello", r.string());
                return c;
            }
            c.close();
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no client on node 0 was served by the host on node 1");
            }
        }
    }
}

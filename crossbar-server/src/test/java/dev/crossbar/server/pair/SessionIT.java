package dev.crossbar.server.pair;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.server.config.SessionConfig;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.Received;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.testing.SessionHost;
import java.net.URI;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * 1:1 sessions on a real relay: a host on {@code /in/shell/exp1} echoes, clients on
 * {@code /out/shell/exp1} each get their own private session; session paths work once; either side's
 * close reaches the other with its code; a host that does not open, or goes away, closes its clients.
 */
class SessionIT {

    static final Duration WAIT = Duration.ofSeconds(20);
    static final int STREAM_BYTES = 10 * 1024 * 1024;
    /** Senders and readers block: their own threads, never the common pool (one thread on two cores). */
    static final java.util.concurrent.ExecutorService THREADS = java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "session-test");
        t.setDaemon(true);
        return t;
    });

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .routing(new RoutingTable(RoutingTable.parseAll(List.of("/shell/*:schema=session"))))
            .sessions(new SessionConfig(Duration.ofMillis(800), SessionConfig.DEFAULT_MAX_PENDING)));

    private SessionHost host() {
        return new SessionHost(relay.ws("/in/shell/exp1"), URI.create("ws://127.0.0.1:" + relay.port()));
    }

    private void awaitHosts(int n) {
        RelayServerExtension.await(n + " host(s) registered", WAIT, () -> relay.server().pairs().hosts() == n);
    }

    @Test
    void threeClientsEachGetExactlyTheirOwnTenMebibytesBack() throws Exception {
        try (SessionHost host = host()) {
            awaitHosts(1);
            List<CompletableFuture<Void>> runs = new ArrayList<>();
            for (int c = 0; c < 3; c++) {
                int seed = c;
                runs.add(CompletableFuture.runAsync(() -> echoOwnStream(seed), THREADS));
            }
            for (CompletableFuture<Void> r : runs) {
                r.orTimeout(240, TimeUnit.SECONDS).join();
            }
            assertEquals(3, host.offers.size());
            // Three different session paths, each opened once.
            assertEquals(3, host.offers.stream().map(o -> o.get("session").asText()).distinct().count());
            RelayServerExtension.await("sessions ended", WAIT, () -> relay.server().pairs().open() == 0);
            String metrics = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(relay.http("/metrics")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(metrics.contains("crossbar_sessions_started_total 3.0"), metrics);
            assertTrue(metrics.contains("crossbar_session_hosts 1.0"), metrics);
        }
    }

    /** Sends 10 MiB of this client's own bytes as messages of varying sizes, and checks the echo. */
    private void echoOwnStream(int seed) {
        Random random = new Random(seed);
        try (JdkClient client = JdkClient.connect(relay.ws("/out/shell/exp1"))) {
            List<byte[]> sent = new ArrayList<>();
            MessageDigest out = MessageDigest.getInstance("SHA-256");
            int total = 0;
            while (total < STREAM_BYTES) {
                byte[] m = new byte[Math.min(STREAM_BYTES - total, 1 + random.nextInt(256 * 1024))];
                random.nextBytes(m);
                m[0] = (byte) seed;
                sent.add(m);
                out.update(m);
                total += m.length;
            }
            CompletableFuture<Void> sender = CompletableFuture.runAsync(() -> sent.forEach(client::sendBinary), THREADS);
            MessageDigest in = MessageDigest.getInstance("SHA-256");
            for (byte[] m : sent) {
                Received r = client.take(Duration.ofSeconds(60));
                assertTrue(!r.text(), "binary stays binary");
                assertEquals(m.length, r.data().length, "message boundaries kept");
                assertEquals(seed, r.data()[0], "only this client's own messages");
                in.update(r.data());
            }
            sender.orTimeout(120, TimeUnit.SECONDS).join();
            assertArrayEquals(out.digest(), in.digest(), "client " + seed + " got back exactly its bytes");
            client.sendText("héllo, text");
            Received t = client.take(WAIT);
            assertTrue(t.text(), "text stays text");
            assertEquals("héllo, text", t.string());
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void theHostIsToldOfEachClientInOneJsonMessage() throws Exception {
        try (SessionHost host = host()) {
            awaitHosts(1);
            try (JdkClient client = JdkClient.connectAs(relay.ws("/out/shell/exp1"), "ssh-bridge/1.0")) {
                JsonNode offer = host.takeOffer(WAIT);
                assertEquals("session", offer.get("type").asText());
                assertEquals("/shell/exp1", offer.get("stream").asText());
                assertTrue(offer.get("session").asText().matches("/session/[A-Za-z0-9_-]{22}"), offer.toString());
                assertEquals("ssh-bridge/1.0", offer.get("client").get("userAgent").asText());
                host.awaitSession(0, WAIT);
                client.sendText("ping");
                assertEquals("ping", client.take(WAIT).string());
            }
        }
    }

    @Test
    void aGuessedOrSpentSessionPathIsRefused() throws Exception {
        String guessed = HttpExchange.upgrade(relay.port(), "/session/AAAAAAAAAAAAAAAAAAAAAA", Map.of());
        assertTrue(guessed.startsWith("HTTP/1.1 404"), guessed);
        assertTrue(guessed.contains("no session waits at this path"), guessed);
        assertTrue(HttpExchange.upgrade(relay.port(), "/session", Map.of()).startsWith("HTTP/1.1 404"));
        assertTrue(HttpExchange.upgrade(relay.port(), "/session/x/y", Map.of()).startsWith("HTTP/1.1 404"));
        try (SessionHost host = host()) {
            awaitHosts(1);
            try (JdkClient client = JdkClient.connect(relay.ws("/out/shell/exp1"))) {
                String path = host.takeOffer(WAIT).get("session").asText();
                host.awaitSession(0, WAIT);
                String reused = HttpExchange.upgrade(relay.port(), path, Map.of());
                assertTrue(reused.startsWith("HTTP/1.1 404"), reused);
                // The session itself is untouched by the refused second use.
                client.sendText("still mine");
                assertEquals("still mine", client.take(WAIT).string());
            }
        }
    }

    @Test
    void aSessionStreamsManyToManyPathIsRefused() throws Exception {
        String r = HttpExchange.upgrade(relay.port(), "/shell/exp1", Map.of());
        assertTrue(r.startsWith("HTTP/1.1 400"), r);
        assertTrue(r.contains("hosts connect to /in/shell/exp1, clients to /out/shell/exp1"), r);
    }

    @Test
    void aClientWithNoHostIsClosedWithTryAgainLater() {
        try (JdkClient client = JdkClient.connect(relay.ws("/out/shell/nobody"))) {
            assertEquals(1013, client.awaitClose(WAIT));
            assertEquals("no host on /shell/nobody; try again later", client.closeReason.join());
        }
    }

    @Test
    void theClientsCloseReachesTheHostWithTheSameCode() throws Exception {
        try (SessionHost host = host()) {
            awaitHosts(1);
            JdkClient client = JdkClient.connect(relay.ws("/out/shell/exp1"));
            SessionHost.Opened s = host.awaitSession(0, WAIT);
            client.sendText("x");
            client.take(WAIT);
            client.ws.sendClose(4001, "logout").orTimeout(5, TimeUnit.SECONDS).join();
            assertEquals(4001, s.awaitCloseCode(WAIT));
            assertEquals("logout", s.closeReason());
            client.close();
        }
    }

    @Test
    void theHostsCloseReachesTheClientWithTheSameCode() throws Exception {
        try (SessionHost host = host()) {
            awaitHosts(1);
            try (JdkClient client = JdkClient.connect(relay.ws("/out/shell/exp1"))) {
                SessionHost.Opened s = host.awaitSession(0, WAIT);
                s.ws.sendClose(4002, "shell exited");
                assertEquals(4002, client.awaitClose(WAIT));
                assertEquals("shell exited", client.closeReason.join());
            }
        }
    }

    @Test
    void aHostThatDoesNotOpenTheSessionInTimeClosesTheClient() throws Exception {
        try (SessionHost host = new SessionHost(relay.ws("/in/shell/exp1"),
                URI.create("ws://127.0.0.1:" + relay.port()), false, Map.of())) {
            awaitHosts(1);
            try (JdkClient client = JdkClient.connect(relay.ws("/out/shell/exp1"))) {
                String path = host.takeOffer(WAIT).get("session").asText();
                long start = System.nanoTime();
                assertEquals(1013, client.awaitClose(WAIT));
                assertEquals("host did not open the session within 800 ms", client.closeReason.join());
                assertTrue(System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(400));
                // Too late: the path is spent.
                String late = HttpExchange.upgrade(relay.port(), path, Map.of());
                assertTrue(late.startsWith("HTTP/1.1 404"), late);
            }
        }
    }

    @Test
    void aHostThatGoesAwayClosesItsSessions() throws Exception {
        SessionHost host = host();
        awaitHosts(1);
        JdkClient a = JdkClient.connect(relay.ws("/out/shell/exp1"));
        JdkClient b = JdkClient.connect(relay.ws("/out/shell/exp1"));
        SessionHost.Opened sa = host.awaitSession(0, WAIT);
        SessionHost.Opened sb = host.awaitSession(1, WAIT);
        a.sendText("a");
        assertEquals("a", a.take(WAIT).string());
        host.control.ws.abort();
        assertEquals(1001, a.awaitClose(WAIT));
        assertEquals("host went away", a.closeReason.join());
        assertEquals(1001, b.awaitClose(WAIT));
        assertEquals(1001, sa.awaitCloseCode(WAIT));
        assertEquals(1001, sb.awaitCloseCode(WAIT));
        awaitHosts(0);
        a.close();
        b.close();
        host.close();
    }

    @Test
    void clientsAreSpreadOverHostsAndNeverShared() throws Exception {
        try (SessionHost h1 = host(); SessionHost h2 = host()) {
            awaitHosts(2);
            List<JdkClient> clients = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                clients.add(JdkClient.connect(relay.ws("/out/shell/exp1")));
            }
            RelayServerExtension.await("4 sessions open", WAIT, () -> relay.server().pairs().open() == 4);
            assertEquals(2, h1.sessions.size());
            assertEquals(2, h2.sessions.size());
            for (int i = 0; i < clients.size(); i++) {
                clients.get(i).sendText("client " + i);
            }
            for (int i = 0; i < clients.size(); i++) {
                assertEquals("client " + i, clients.get(i).take(WAIT).string());
                assertEquals(null, clients.get(i).poll(Duration.ofMillis(100)));
            }
            clients.forEach(JdkClient::close);
        }
    }

    @Test
    void ordinaryStreamsAreUnchanged() {
        try (JdkClient sub = JdkClient.connect(relay.ws("/out/cam"));
             JdkClient pub = JdkClient.connect(relay.ws("/in/cam"))) {
            RelayServerExtension.await("joined", WAIT, () -> relay.server().connections() == 2);
            pub.sendText("frame");
            assertEquals("frame", sub.take(WAIT).string());
        }
    }
}

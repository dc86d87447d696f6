package dev.crossbar.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.JdkClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /admin/drain} before a restart: new upgrades refused (503), {@code /healthz} draining,
 * every client closed with 1012 so that it reconnects elsewhere, and a lossless transfer let finish,
 * or, at the deadline, told exactly how far it got.
 */
class DrainIT {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static CrossbarServer start(Duration drainTimeout) {
        return CrossbarServer.start(ServerConfig.builder().listen("127.0.0.1:0").eventLoops(2)
                .routing(new RoutingTable(RoutingTable.parseAll(List.of("/files/**:slow=backpressure"))))
                .drainTimeout(drainTimeout).build());
    }

    private static HttpResponse<String> post(CrossbarServer s, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path))
                .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(CrossbarServer s, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void everyoneIsToldToReconnectAndALosslessTransferFinishesFirst() throws Exception {
        CrossbarServer server = start(Duration.ofSeconds(20));
        String ws = "ws://127.0.0.1:" + server.port();
        try (JdkClient chatA = JdkClient.connect(URI.create(ws + "/chat"));
             JdkClient viewer = JdkClient.connect(URI.create(ws + "/out/cam"));
             JdkClient filesIn = JdkClient.connect(URI.create(ws + "/in/files/x"));
             JdkClient filesOut = JdkClient.connect(URI.create(ws + "/out/files/x"))) {
            RelayServerExtensionAwait.members(server, 4);
            AtomicBoolean sending = new AtomicBoolean(true);
            AtomicInteger sent = new AtomicInteger();
            Thread publisher = new Thread(() -> {
                long stopAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
                while (System.nanoTime() < stopAt) {
                    filesIn.sendBinary(new byte[] {(byte) sent.get(), 1, 2, 3});
                    sent.incrementAndGet();
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                sending.set(false);
            });
            publisher.start();
            Thread.sleep(200);

            HttpResponse<String> r = post(server, "/admin/drain");
            assertEquals(202, r.statusCode(), r.body());
            assertTrue(r.body().contains("\"draining\":true"), r.body());

            assertEquals(1012, chatA.awaitClose(Duration.ofSeconds(10)), "an N:N client is told the relay restarts");
            assertEquals(1012, viewer.awaitClose(Duration.ofSeconds(10)));
            HttpResponse<String> health = get(server, "/healthz");
            assertEquals(503, health.statusCode());
            assertTrue(health.body().startsWith("draining"), health.body());
            String refused = HttpExchange.upgrade(server.port(), "/chat", Map.of());
            assertTrue(refused.startsWith("HTTP/1.1 503"), refused);
            assertTrue(refused.contains("draining"), refused);

            // The lossless transfer goes on while the others are gone, and ends once it is done.
            publisher.join(10_000);
            int received = 0;
            while (received < sent.get()) {
                assertEquals((byte) received, filesOut.take(Duration.ofSeconds(10)).data()[0], "in order");
                received++;
            }
            assertEquals(1012, filesOut.awaitClose(Duration.ofSeconds(10)));
            assertEquals(1012, filesIn.awaitClose(Duration.ofSeconds(10)));
            assertTrue(filesOut.closeReason.join().contains("quiet"), filesOut.closeReason.join());
        } finally {
            server.close();
        }
    }

    @Test
    void aLosslessTransferStillGoingAtTheDeadlineIsToldHowFarItGot() throws Exception {
        CrossbarServer server = start(Duration.ofSeconds(1));
        String ws = "ws://127.0.0.1:" + server.port();
        AtomicBoolean stop = new AtomicBoolean();
        try (JdkClient filesIn = JdkClient.connect(URI.create(ws + "/in/files/y"));
             JdkClient filesOut = JdkClient.connect(URI.create(ws + "/out/files/y"))) {
            RelayServerExtensionAwait.members(server, 2);
            Thread publisher = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        filesIn.sendBinary(new byte[] {7});
                        Thread.sleep(5);
                    } catch (Exception e) {
                        return; // closed by the drain
                    }
                }
            });
            publisher.start();
            Thread.sleep(200);
            server.drain(server.config().drainTimeout());
            assertEquals(1012, filesOut.awaitClose(Duration.ofSeconds(15)));
            String reason = filesOut.closeReason.join();
            int received = 0;
            while (filesOut.poll(Duration.ofMillis(200)) != null) {
                received++;
            }
            assertTrue(reason.contains("received " + received + " messages"), reason + " / received " + received);
            stop.set(true);
            publisher.join(5000);
        } finally {
            stop.set(true);
            server.close();
        }
    }

    /** Waits for the relay to count its clients as joined. */
    static final class RelayServerExtensionAwait {
        static void members(CrossbarServer server, int n) {
            dev.crossbar.server.testing.RelayServerExtension.await(n + " members", Duration.ofSeconds(10),
                    () -> server.topics().topics().stream().mapToInt(t -> t.size()).sum() >= n);
        }
    }
}

package dev.crossbar.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.testing.JdkClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reload (here {@code POST /admin/reload}, the same as SIGHUP) applies the edited file to new
 * topics and connections while the clients already connected lose nothing; a file with an error,
 * or one that changes what needs a restart, is refused whole, naming why.
 */
class ReloadIT {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path dir;

    private static HttpResponse<String> reload(CrossbarServer server) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/admin/reload"))
                .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void anEditedFileReachesNewTopicsAndConnectionsWhileConnectedClientsLoseNothing() throws Exception {
        Path file = dir.resolve("crossbar.yaml");
        Files.writeString(file, "listen: 127.0.0.1:0\nevent-loops: 2\nmax-message: 64KiB\n");
        String[] args = {"--config", file.toString()};
        ServerConfig first = Main.load(args, Map.of());
        try (CrossbarServer server = CrossbarServer.start(first, () -> Main.load(args, Map.of()))) {
            URI chat = URI.create("ws://127.0.0.1:" + server.port() + "/chat");
            try (JdkClient a = JdkClient.connect(chat); JdkClient b = JdkClient.connect(chat)) {
                awaitMembers(server, "/chat", 2);
                for (int i = 0; i < 50; i++) {
                    a.sendText("before " + i);
                }
                // The port stays what it was (0 in the file means the one already bound is kept: same text).
                Files.writeString(file, "listen: 127.0.0.1:0\nevent-loops: 2\nmax-message: 1KiB\n"
                        + "route:\n  - \"/data/**:start=last\"\n");
                HttpResponse<String> r = reload(server);
                assertEquals(200, r.statusCode(), r.body());
                assertTrue(r.body().contains("\"applied\":true"), r.body());
                for (int i = 0; i < 50; i++) {
                    a.sendText("after " + i);
                }
                for (int i = 0; i < 50; i++) {
                    assertEquals("before " + i, b.take(Duration.ofSeconds(10)).string());
                }
                for (int i = 0; i < 50; i++) {
                    assertEquals("after " + i, b.take(Duration.ofSeconds(10)).string());
                }
                // A connection open before the reload keeps its limit (64 KiB): 2 KiB still passes.
                a.sendText("x".repeat(2048));
                assertEquals(2048, b.take(Duration.ofSeconds(10)).data().length);
            }

            // A new topic follows the new rule: a newcomer gets the last value.
            URI data = URI.create("ws://127.0.0.1:" + server.port() + "/data/pendulum");
            try (JdkClient pub = JdkClient.connect(data)) {
                pub.sendText("{\"angle\":3}");
                awaitMembers(server, "/data/pendulum", 1);
                Thread.sleep(100);
                try (JdkClient late = JdkClient.connect(data)) {
                    assertEquals("{\"angle\":3}", late.take(Duration.ofSeconds(10)).string());
                }
            }

            // A new connection gets the new message limit (1 KiB): more closes it with 1009.
            try (JdkClient c = JdkClient.connect(chat)) {
                c.sendText("x".repeat(2048));
                assertEquals(1009, c.awaitClose(Duration.ofSeconds(10)));
            }
        }
    }

    @Test
    void aFileWithAnErrorOrARestartOnlyChangeIsRefusedAndTheRunningConfigurationKept() throws Exception {
        Path file = dir.resolve("crossbar.yaml");
        Files.writeString(file, "listen: 127.0.0.1:0\nevent-loops: 1\nmax-connections: 100\n");
        String[] args = {"--config", file.toString()};
        try (CrossbarServer server = CrossbarServer.start(Main.load(args, Map.of()), () -> Main.load(args, Map.of()))) {
            Files.writeString(file, "listen: 127.0.0.1:0\nevent-loops: 1\nmax-connections: 100\nmax-conections: 5\n");
            HttpResponse<String> r = reload(server);
            assertEquals(409, r.statusCode(), r.body());
            assertTrue(r.body().contains(file + ":4: max-conections: unknown key"), r.body());

            Files.writeString(file, "listen: 127.0.0.1:0\nevent-loops: 2\nmax-connections: 5\n");
            r = reload(server);
            assertEquals(409, r.statusCode(), r.body());
            assertTrue(r.body().contains("--event-loops: cannot change without a restart"), r.body());
            assertEquals(100, server.config().maxConnections(), "nothing of a refused file is applied");

            Files.writeString(file, "listen: 127.0.0.1:0\nevent-loops: 1\nmax-connections: 5\n");
            r = reload(server);
            assertEquals(200, r.statusCode(), r.body());
            assertEquals(5, server.config().maxConnections());
        }
    }

    private static void awaitMembers(CrossbarServer server, String topic, int n) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (server.topics().topics().stream().noneMatch(t -> t.key().name().equals(topic) && t.size() >= n)) {
            assertTrue(System.nanoTime() < deadline, "no " + n + " members on " + topic);
            Thread.sleep(10);
        }
    }
}

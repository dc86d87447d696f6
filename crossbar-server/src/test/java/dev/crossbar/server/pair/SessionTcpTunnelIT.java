package dev.crossbar.server.pair;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.Received;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.testing.TcpBridge;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A real TCP protocol through a session, as the docs' ssh example does with websocat: an HTTP server
 * behind the host, a TCP-over-WebSocket bridge on each side, and the JDK's HTTP client fetching through
 * the tunnel. Each TCP connection of the client is its own session.
 */
class SessionTcpTunnelIT {

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .routing(new RoutingTable(RoutingTable.parseAll(List.of("/lab/**:schema=session")))));

    @Test
    void httpThroughTheRelayReachesTheServerBehindTheHost() throws Exception {
        byte[] file = new byte[3 * 1024 * 1024 + 17];
        new Random(42).nextBytes(file);
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/file", ex -> {
            ex.sendResponseHeaders(200, file.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(file);
            }
        });
        server.start();
        List<TcpBridge> bridges = new CopyOnWriteArrayList<>();
        ObjectMapper json = new ObjectMapper();
        try (JdkClient host = JdkClient.connect(relay.ws("/in/lab/exp1/http"));
             ServerSocket local = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            RelayServerExtension.await("host", Duration.ofSeconds(10), () -> relay.server().pairs().hosts() == 1);
            Thread agent = new Thread(() -> {
                try {
                    while (true) {
                        Received offer = host.poll(Duration.ofSeconds(60));
                        if (offer == null) {
                            continue;
                        }
                        String path = json.readTree(offer.string()).get("session").asText();
                        Socket toServer = new Socket("127.0.0.1", server.getAddress().getPort());
                        bridges.add(TcpBridge.open(toServer, URI.create("ws://127.0.0.1:" + relay.port() + path)));
                    }
                } catch (Exception e) {
                    // host connection ended
                }
            }, "host-agent");
            agent.setDaemon(true);
            agent.start();
            Thread listener = new Thread(() -> {
                try {
                    while (true) {
                        Socket user = local.accept();
                        bridges.add(TcpBridge.open(user, relay.ws("/out/lab/exp1/http")));
                    }
                } catch (Exception e) {
                    // listener closed
                }
            }, "client-bridge");
            listener.setDaemon(true);
            listener.start();

            URI through = URI.create("http://127.0.0.1:" + local.getLocalPort() + "/file");
            for (int i = 0; i < 2; i++) {
                // A client each time: a connection each time, so a session each time.
                HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofSeconds(5)).build();
                HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(through).timeout(Duration.ofSeconds(60))
                        .build(), HttpResponse.BodyHandlers.ofByteArray());
                assertEquals(200, r.statusCode());
                assertArrayEquals(file, r.body(), "the file, byte for byte, through the tunnel");
            }
            RelayServerExtension.await("a session per TCP connection", Duration.ofSeconds(10),
                    () -> relay.server().pairs().started() >= 2);
        } finally {
            bridges.forEach(TcpBridge::close);
            server.stop(0);
        }
    }
}

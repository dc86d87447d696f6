package dev.crossbar.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.RelayServerExtension;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Plain HTTP before the upgrade: health, and clear refusals for what cannot become a WebSocket. */
class HttpIT {

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b.maxPathLength(32));

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void healthzAnswers200() throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(relay.http("/healthz")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        assertEquals("ok\n", r.body());
    }

    @Test
    void plainGetOnATopicAsksForAnUpgrade() throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(relay.http("/lab/cam")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(426, r.statusCode());
        assertTrue(r.body().contains("WebSocket"), r.body());
    }

    /** Raw upgrade request, so the test controls the path byte for byte. */
    private String upgrade(String path) throws Exception {
        try (Socket s = new Socket("127.0.0.1", relay.port())) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(("GET " + path + " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            return HttpExchange.readResponse(s.getInputStream());
        }
    }

    @Test
    void badRoutesAreRefusedWith400AndAReason() throws Exception {
        String dots = upgrade("/a/../b");
        assertTrue(dots.startsWith("HTTP/1.1 400"), dots);
        assertTrue(dots.contains("dot segment"), dots);

        String control = upgrade("/a%00b");
        assertTrue(control.startsWith("HTTP/1.1 400"), control);
        assertTrue(control.contains("control character"), control);

        String longPath = upgrade("/" + "x".repeat(40));
        assertTrue(longPath.startsWith("HTTP/1.1 400"), longPath);
        assertTrue(longPath.contains("path too long"), longPath);

        String empty = upgrade("/");
        assertTrue(empty.startsWith("HTTP/1.1 400"), empty);
        assertTrue(empty.contains("empty path"), empty);

        String in = upgrade("/in/");
        assertTrue(in.startsWith("HTTP/1.1 400"), in);
    }

    @Test
    void reservedPathsCannotBeTopics() throws Exception {
        String r = upgrade("/healthz");
        assertTrue(r.startsWith("HTTP/1.1 200"), r);
    }
}

package dev.crossbar.bench.soak;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.config.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The soak's plain-socket viewer against the real relay: every message whole, with its type, in
 * order; pings answered, so an idle viewer is kept; the relay's close frame read with its code.
 */
class RawViewerIT {

    private static final Duration PING = Duration.ofMillis(200);

    private CrossbarServer server;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void start() {
        server = CrossbarServer.start(ServerConfig.builder()
                .listen("127.0.0.1:0")
                .eventLoops(1)
                .pingInterval(PING)
                .idleTimeout(PING.multipliedBy(2))
                .build());
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private URI uri(String path) {
        return URI.create("ws://127.0.0.1:" + server.port() + path);
    }

    private record Got(byte[] payload, boolean text) {
    }

    @Test
    void readsEveryMessageWholeAnswersPingsAndReadsTheCloseFrame() throws Exception {
        LinkedBlockingQueue<Got> got = new LinkedBlockingQueue<>();
        RawViewer viewer = new RawViewer(uri("/out/cam/raw"), (payload, text) -> got.add(new Got(payload, text)),
                Long.MAX_VALUE);
        Ws camera = Ws.connect(http, uri("/in/cam/raw"), (payload, text) -> { });
        List<byte[]> sent = new ArrayList<>();
        for (int seq = 0; seq < 50; seq++) {
            // Frames of three header sizes: 2 bytes (a text under 126), 4 (video), 10 (over 64 KiB).
            byte[] frame = seq % 10 == 9 ? new byte[70_000] : VideoFrames.frame(new Label(1, 1, seq));
            frame[0] = (byte) seq;
            sent.add(frame);
            camera.sendBinary(frame);
        }
        camera.sendText("done");
        for (byte[] frame : sent) {
            Got g = got.poll(10, TimeUnit.SECONDS);
            assertFalse(g == null || g.text(), "a binary message");
            assertArrayEquals(frame, g.payload());
        }
        Got last = got.poll(10, TimeUnit.SECONDS);
        assertTrue(last != null && last.text());
        assertEquals("done", new String(last.payload(), java.nio.charset.StandardCharsets.UTF_8));

        Thread.sleep(PING.multipliedBy(6).toMillis());
        assertTrue(viewer.open(), "kept past the idle timeout: its pongs were heard");

        server.close();
        Ws.Ending end = viewer.ended().get(10, TimeUnit.SECONDS);
        assertEquals(1001, end.code(), "the relay's close frame on shutdown: " + end);
    }
}

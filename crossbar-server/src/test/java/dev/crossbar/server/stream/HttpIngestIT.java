package dev.crossbar.server.stream;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static dev.crossbar.server.testing.StatsReader.clientByAgent;
import static dev.crossbar.server.testing.StatsReader.nextWhere;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.schema.OneToMany;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.IngestPoster;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.Received;
import dev.crossbar.server.testing.RelayServerExtension;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * HTTP ingest ({@code POST}/{@code PUT} on {@code /in/<stream>}) against a real relay with raw
 * sockets as posters and WebSocket subscribers: MPEG-TS cut into whole packets as it arrives (declared
 * or recognised), a viewer joining mid-stream under {@code start=keyframe} starting at a keyframe,
 * any other body relayed byte for byte, the poster held back through TCP on a
 * {@code slow=backpressure} stream, {@code Expect: 100-continue}, statistics, refusals, shutdown.
 */
class HttpIngestIT {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int INGEST_MESSAGE = 8 * 1024;
    /** The largest MPEG-TS message: whole packets of the option's value. */
    private static final int TS_MESSAGE = INGEST_MESSAGE / TsStream.PACKET * TsStream.PACKET;
    private static final String FIXTURE = "mpeg1-g60";
    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .ingestMessageBytes(INGEST_MESSAGE)
            .maxClientQueueBytes(256 * 1024)
            .statsInterval(Duration.ofMillis(200))
            .statsFullClientDetails(true)
            .routing(new RoutingTable(RoutingTable.parseAll(List.of(
                    "/cam/**:start=keyframe", "/files/**:slow=backpressure", "/shell/**:schema=session")))));

    private Topic topic(String name) {
        return relay.server().topics().get(new TopicKey(OneToMany.INSTANCE, name));
    }

    private long bytesIn(String name) {
        Topic t = topic(name);
        return t == null ? 0 : t.totals()[1];
    }

    private static JsonNode json(String response) throws Exception {
        return JSON.readTree(HttpExchange.body(response));
    }

    /** Messages the viewer receives until {@code total} bytes have come; each checked by {@code check}. */
    private static List<byte[]> receive(NettyClient viewer, long total) {
        List<byte[]> out = new java.util.ArrayList<>();
        long got = 0;
        while (got < total) {
            Received r = viewer.take(WAIT);
            assertFalse(r.text(), "ingest publishes binary messages");
            out.add(r.data());
            got += r.data().length;
        }
        assertEquals(total, got, "not a byte more");
        return out;
    }

    private static byte[] concat(List<byte[]> messages) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        messages.forEach(all::writeBytes);
        return all.toByteArray();
    }

    /** Declared ({@code video/mp2t}) or recognised by its sync bytes, written in 1,000-byte chunks. */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void mpegTsIsRelayedInWholePacketsAsItArrives(boolean declared) throws Exception {
        byte[] ts = TsStream.fixture(FIXTURE + ".ts");
        try (NettyClient viewer = NettyClient.connect(relay.ws("/out/cam/1"))) {
            await("viewer joined", WAIT, () -> topic("cam/1") != null);
            Map<String, String> headers = declared ? Map.of("Content-Type", "video/mp2t") : Map.of();
            try (IngestPoster poster = IngestPoster.open(relay.port(), "POST", "/in/cam/1", -1, headers)) {
                poster.writeAll(ts, 1000);
                List<byte[]> messages = receive(viewer, ts.length);
                poster.end();
                String response = poster.response();
                assertEquals(200, IngestPoster.status(response), response);
                assertTrue(response.contains("Connection: close") || response.contains("connection: close"), response);
                JsonNode summary = json(response);
                assertEquals("/in/cam/1", summary.get("stream").asText());
                assertEquals(ts.length, summary.get("bytes").asLong());
                assertEquals(messages.size(), summary.get("messages").asInt());

                for (int i = 0; i < messages.size(); i++) {
                    byte[] m = messages.get(i);
                    assertTrue(m.length <= TS_MESSAGE, "message " + i + ": " + m.length + " bytes");
                    assertEquals(0x47, m[0], "message " + i + " starts with a packet's sync byte");
                    if (i < messages.size() - 1) {
                        assertEquals(0, m.length % TsStream.PACKET, "message " + i + ": whole packets");
                    }
                }
                assertArrayEquals(ts, concat(messages), "byte for byte");
                assertNull(viewer.poll(Duration.ofMillis(200)));
            }
        }
    }

    @Test
    void aViewerJoiningMidStreamStartsAtTheKeyframe() throws Exception {
        byte[] ts = TsStream.fixture(FIXTURE + ".ts");
        List<Integer> keyframes = TsStream.keyframes(FIXTURE);
        int second = keyframes.get(1);
        int joinAt = second + (keyframes.get(2) - second) / 3;
        try (IngestPoster poster = IngestPoster.post(relay.port(), "/in/cam/2")) {
            poster.write(ts, 0, joinAt);
            // Everything but the packet the cut went through has been published.
            await("first part published", WAIT, () -> bytesIn("cam/2") >= joinAt - TsStream.PACKET);
            try (NettyClient viewer = NettyClient.connect(relay.ws("/out/cam/2"))) {
                await("viewer joined", WAIT, () -> topic("cam/2").size() == 2);
                poster.write(ts, joinAt, ts.length - joinAt);
                poster.end();
                List<byte[]> messages = receive(viewer, ts.length - second);
                assertTrue(TsStream.isRandomAccess(messages.get(0), 0), "first bytes are a keyframe's packet");
                assertArrayEquals(Arrays.copyOfRange(ts, second, ts.length), concat(messages),
                        "from the keyframe on, byte for byte");
                assertEquals(200, IngestPoster.status(poster.response()));
            }
        }
    }

    @Test
    void anyOtherBodyIsRelayedPieceByPieceByteExact() throws Exception {
        byte[] body = new byte[1024 * 1024 + 17];
        new SplittableRandom(46).nextBytes(body);
        body[0] = '{'; // not a sync byte: known at once not to be MPEG-TS
        try (NettyClient viewer = NettyClient.connect(relay.ws("/out/data/1"))) {
            await("viewer joined", WAIT, () -> topic("data/1") != null);
            try (IngestPoster poster = IngestPoster.open(relay.port(), "PUT", "/in/data/1", body.length,
                    Map.of("Content-Type", "application/octet-stream"))) {
                poster.writeAll(body, 3000);
                List<byte[]> messages = receive(viewer, body.length);
                String response = poster.response();
                assertEquals(200, IngestPoster.status(response), response);
                assertEquals(body.length, json(response).get("bytes").asLong());
                assertArrayEquals(body, concat(messages));
                assertTrue(messages.stream().allMatch(m -> m.length <= 8192),
                        "pieces as the HTTP decoder hands them over, at most 8 KiB");
            }
        }
    }

    @Test
    void aBodyThatLooksLikeMpegTsOnlyAtFirstIsRelayedAsIs() throws Exception {
        byte[] body = new byte[4000];
        Arrays.fill(body, (byte) 'x');
        body[0] = 0x47;
        body[188] = 0x47; // two sync bytes, not five
        try (NettyClient viewer = NettyClient.connect(relay.ws("/out/data/2"))) {
            await("viewer joined", WAIT, () -> topic("data/2") != null);
            try (IngestPoster poster = IngestPoster.post(relay.port(), "/in/data/2")) {
                poster.writeAll(body, 500);
                poster.end();
                assertArrayEquals(body, concat(receive(viewer, body.length)));
                assertEquals(200, IngestPoster.status(poster.response()));
            }
        }
    }

    @Test
    void expectContinueIsAnsweredBeforeTheBody() throws Exception {
        byte[] body = "{\"t\":21.5}\n".getBytes(StandardCharsets.US_ASCII);
        try (NettyClient viewer = NettyClient.connect(relay.ws("/out/data/3"))) {
            await("viewer joined", WAIT, () -> topic("data/3") != null);
            try (IngestPoster poster = IngestPoster.open(relay.port(), "POST", "/in/data/3", body.length,
                    Map.of("Expect", "100-continue"))) {
                assertTrue(poster.head().startsWith("HTTP/1.1 100 Continue\r\n"));
                poster.write(body, 0, body.length);
                assertEquals(200, IngestPoster.status(poster.response()));
                assertArrayEquals(body, viewer.take(WAIT).data());
            }
        }
    }

    @Test
    void thePosterIsAPublisherInTheStatistics() throws Exception {
        try (IngestPoster poster = IngestPoster.open(relay.port(), "POST", "/in/cam/stats", -1,
                Map.of("User-Agent", "Lavf/61.7.100"));
             JdkClient stats = JdkClient.connect(relay.ws("/ws"))) {
            byte[] ts = TsStream.fixture(FIXTURE + ".ts");
            poster.write(ts, 0, 100 * TsStream.PACKET);
            JsonNode s = nextWhere(stats, WAIT, snap -> snap.get("clients").size() == 1
                    && snap.get("clients").get(0).get("in").get("bytes").asLong() == 100 * TsStream.PACKET);
            JsonNode p = clientByAgent(s, "Lavf/61.7.100");
            assertEquals("publisher", p.get("role").asText());
            assertEquals("/in/cam/stats", p.get("path").asText());
            assertTrue(p.get("remoteAddr").asText().startsWith("127.0.0.1:"), p.toString());
            assertEquals(1, relay.server().connections(), "counted among the relay's connections");
            poster.end();
            assertEquals(200, IngestPoster.status(poster.response()));
            await("left the topic", WAIT, () -> topic("cam/stats") == null);
        }
    }

    /**
     * A subscriber that reads nothing holds a {@code slow=backpressure} stream's poster back: the relay
     * stops reading the body (the poster's writes block) instead of queuing it; once the subscriber
     * reads, every byte arrives, in order.
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aLosslessStreamHoldsThePosterBackThroughTcp() throws Exception {
        byte[] body = new byte[24 * 1024 * 1024];
        new SplittableRandom(7).nextBytes(body);
        body[0] = 'x';
        try (RawClient sub = new RawClient(relay.port(), 64 * 1024)) {
            assertTrue(sub.upgrade("/out/files/big").startsWith("HTTP/1.1 101"));
            await("subscriber joined", WAIT, () -> topic("files/big") != null);
            IngestPoster poster = IngestPoster.open(relay.port(), "POST", "/in/files/big", body.length, Map.of());
            CompletableFuture<String> posted = CompletableFuture.supplyAsync(() -> {
                try {
                    poster.writeAll(body, 64 * 1024);
                    return poster.response();
                } catch (Exception e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            try {
                // The relay reads on while the sockets' buffers towards the subscriber fill, then stops.
                long[] last = {-1};
                await("the poster held back", WAIT, () -> {
                    long now = bytesIn("files/big");
                    boolean still = now == last[0] && topic("files/big").holdBack().held();
                    last[0] = now;
                    sleepQuietly(300);
                    return still;
                });
                assertTrue(last[0] < body.length / 2, "held at " + last[0] + " of " + body.length + " bytes");
                assertFalse(posted.isDone(), "the poster's writes wait");

                MessageDigest got = MessageDigest.getInstance("SHA-256");
                long received = 0;
                while (received < body.length) {
                    RawClient.Frame f = sub.readFrame(10_000);
                    assertTrue(f != null && f.opcode() == 0x2, "a binary message, got " + f);
                    got.update(f.payload());
                    received += f.payload().length;
                }
                assertEquals(body.length, received);
                assertArrayEquals(MessageDigest.getInstance("SHA-256").digest(body), got.digest(), "SHA-256");
                String response = posted.get(30, TimeUnit.SECONDS);
                assertEquals(200, IngestPoster.status(response), response);
                assertEquals(body.length, json(response).get("bytes").asLong());
            } finally {
                poster.close();
            }
        }
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void whatCannotBeIngestedIsRefusedWithAReason() throws Exception {
        try (IngestPoster empty = IngestPoster.post(relay.port(), "/in/")) {
            String r = empty.response();
            assertEquals(400, IngestPoster.status(r), r);
            assertTrue(HttpExchange.body(r).contains("empty stream name after /in/"), r);
        }
        try (IngestPoster shell = IngestPoster.post(relay.port(), "/in/shell/pi")) {
            String r = shell.response();
            assertEquals(405, IngestPoster.status(r), r);
            assertTrue(r.toLowerCase(java.util.Locale.ROOT).contains("allow: get\r\n"), r);
            assertTrue(HttpExchange.body(r).contains("1:1 session stream"), r);
        }
        // Not an ingest: a plain request on a subscriber's path is answered as before.
        String plain = HttpExchange.exchange(relay.port(),
                "POST /out/cam HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi".getBytes(StandardCharsets.US_ASCII));
        assertTrue(plain.startsWith("HTTP/1.1 426 "), plain);
        assertEquals(0, relay.server().topics().size());
    }

    /**
     * A drain before a restart: a camera still posting is answered 503 at once (it posts again, to
     * another node), a new poster is refused, and an upload on a lossless stream is let finish, then
     * told at the deadline how much of it was relayed.
     */
    @Test
    void aDrainAnswersPostersWith503AndLetsALosslessUploadRunToItsDeadline() throws Exception {
        byte[] piece = "{\"t\":1}\n".getBytes(StandardCharsets.US_ASCII);
        try (IngestPoster camera = IngestPoster.post(relay.port(), "/in/data/camera");
             IngestPoster upload = IngestPoster.post(relay.port(), "/in/files/upload")) {
            camera.write(piece, 0, piece.length);
            upload.write(piece, 0, piece.length);
            await("both publishing", WAIT, () -> bytesIn("data/camera") == piece.length
                    && bytesIn("files/upload") == piece.length);
            CompletableFuture<Void> drained = relay.server().drain(Duration.ofSeconds(2));
            String r = camera.response();
            assertEquals(503, IngestPoster.status(r), r);
            assertTrue(HttpExchange.body(r).contains("relay restarting: post again"), r);
            try (IngestPoster late = IngestPoster.post(relay.port(), "/in/data/late")) {
                String refused = late.response();
                assertEquals(503, IngestPoster.status(refused), refused);
                assertTrue(HttpExchange.body(refused).contains("draining before a restart"), refused);
            }
            upload.write(piece, 0, piece.length); // still taken while the drain waits
            await("the upload goes on", WAIT, () -> bytesIn("files/upload") == 2L * piece.length);
            String cut = upload.response();
            assertEquals(503, IngestPoster.status(cut), cut);
            assertTrue(HttpExchange.body(cut).contains("relay restarting before this body ended: "
                    + 2 * piece.length + " bytes of it (2 messages) were relayed"), cut);
            drained.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aPosterStillSendingAtShutdownIsAnswered503() throws Exception {
        try (IngestPoster poster = IngestPoster.post(relay.port(), "/in/data/shutdown")) {
            byte[] piece = "{\"t\":1}\n".getBytes(StandardCharsets.US_ASCII);
            poster.write(piece, 0, piece.length);
            await("publishing", WAIT, () -> bytesIn("data/shutdown") == piece.length);
            relay.server().close();
            String r = poster.response();
            assertEquals(503, IngestPoster.status(r), r);
            assertTrue(HttpExchange.body(r).contains("relay shutting down"), r);
        }
    }
}

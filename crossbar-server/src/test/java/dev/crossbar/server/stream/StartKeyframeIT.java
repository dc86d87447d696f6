package dev.crossbar.server.stream;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.Received;
import dev.crossbar.server.testing.RelayServerExtension;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code start=keyframe} on ffmpeg's MPEG-TS, chunked as cameras send it: a viewer that joins
 * mid-GOP gets a keyframe's packets as its first bytes, then the live stream, the publisher's
 * messages in order, none twice, none merged; a viewer of a stream without the rule starts
 * wherever the stream is.
 */
class StartKeyframeIT {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String FIXTURE = "mpeg1-g60";

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .routing(new RoutingTable(RoutingTable.parseAll(List.of("/cam/**:start=keyframe")))));

    private Topic topic(String name) {
        for (Topic t : relay.server().topics().topics()) {
            if (t.key().name().equals(name)) {
                return t;
            }
        }
        return null;
    }

    /** 4,512 bytes (24 packets, as jsmpeg senders write) and 4,096 (packets split across messages). */
    @ParameterizedTest
    @ValueSource(ints = {24 * TsStream.PACKET, 4096})
    void aViewerJoiningMidGopStartsAtTheKeyframeThenGetsTheLiveStream(int chunkSize) throws Exception {
        byte[] ts = TsStream.fixture(FIXTURE + ".ts");
        List<Integer> keyframes = TsStream.keyframes(FIXTURE);
        List<byte[]> chunks = TsStream.chunks(ts, chunkSize);
        int second = keyframes.get(1);
        // Join about a third of the way into the second group of pictures.
        int joinAfter = (second + (keyframes.get(2) - second) / 3) / chunkSize;

        try (JdkClient cam = JdkClient.connect(relay.ws("/in/cam/1"));
             JdkClient plain = JdkClient.connect(relay.ws("/in/plain/1"))) {
            await("publishers joined", WAIT, () -> relay.server().topics().size() == 2);
            for (int i = 0; i < joinAfter; i++) {
                cam.sendBinary(chunks.get(i));
                plain.sendBinary(chunks.get(i));
            }
            await("early chunks relayed", WAIT, () -> topic("cam/1").totals()[0] == joinAfter
                    && topic("plain/1").totals()[0] == joinAfter);

            // Viewers on Netty's client: the JDK's garbles what follows its first read buffer when
            // that read also held the handshake's response, as a replay makes likely (JdkClient).
            try (NettyClient viewer = NettyClient.connect(relay.ws("/out/cam/1"));
                 NettyClient other = NettyClient.connect(relay.ws("/out/plain/1"))) {
                await("viewers joined", WAIT, () -> topic("cam/1").size() == 2 && topic("plain/1").size() == 2);
                for (int i = joinAfter; i < chunks.size(); i++) {
                    cam.sendBinary(chunks.get(i));
                    plain.sendBinary(chunks.get(i));
                }

                // The keyframe viewer: first bytes are the second keyframe's packet, then everything after.
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                Received first = viewer.take(WAIT);
                assertFalse(first.text());
                assertTrue(TsStream.isRandomAccess(first.data(), 0), "first bytes are a keyframe's packet");
                got.write(first.data());
                int expectedLength = ts.length - second;
                // Messages after the cut are the publisher's own, one for one.
                int chunk = (second + first.data().length - 1) / chunkSize + 1;
                while (got.size() < expectedLength) {
                    Received r = viewer.take(WAIT);
                    assertArrayEquals(chunks.get(chunk), r.data(), "message " + chunk + " whole and in order");
                    chunk++;
                    got.write(r.data());
                }
                assertArrayEquals(Arrays.copyOfRange(ts, second, ts.length), got.toByteArray(),
                        "from the keyframe on, byte for byte");
                assertNull(viewer.poll(Duration.ofMillis(300)), "nothing twice");

                // Without the rule: the live stream from where it was, not at a keyframe.
                Received live = other.take(WAIT);
                assertArrayEquals(chunks.get(joinAfter), live.data());
                assertFalse(TsStream.isRandomAccess(live.data(), 0), "no rule: starts mid-GOP");
                for (int i = joinAfter + 1; i < chunks.size(); i++) {
                    assertArrayEquals(chunks.get(i), other.take(WAIT).data());
                }
            }
        }
    }

    @org.junit.jupiter.api.Test
    void aStreamThatIsNotMpegTsIsRelayedAsBeforeAndTheStatsSaySo() throws Exception {
        try (JdkClient pub = JdkClient.connect(relay.ws("/in/cam/json"))) {
            await("publisher joined", WAIT, () -> relay.server().topics().size() == 1);
            byte[] json = "{\"temperature\": 21.5, \"unit\": \"C\", \"padding\": \"................\"}"
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            for (int i = 0; i < 40; i++) {
                pub.sendBinary(json);
            }
            await("relayed", WAIT, () -> topic("cam/json").totals()[0] == 40);
            assertEquals("not-mpeg-ts", topic("cam/json").memoryState(System.nanoTime()).get("format"));
            assertEquals(0, topic("cam/json").memoryState(System.nanoTime()).get("messages"));
            try (JdkClient viewer = JdkClient.connect(relay.ws("/out/cam/json"))) {
                await("viewer joined", WAIT, () -> topic("cam/json").size() == 2);
                assertNull(viewer.poll(Duration.ofMillis(300)), "nothing kept for a stream that is not video");
                pub.sendBinary(json);
                assertArrayEquals(json, viewer.take(WAIT).data());
            }
        }
    }
}

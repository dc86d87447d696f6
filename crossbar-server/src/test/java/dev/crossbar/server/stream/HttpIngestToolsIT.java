package dev.crossbar.server.stream;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.crossbar.core.relay.Member;
import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.schema.OneToMany;
import dev.crossbar.core.schema.Role;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.Received;
import dev.crossbar.server.testing.RelayServerExtension;
import dev.crossbar.server.testing.Tools;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * HTTP ingest with the tools a lab uses (failsafe: these take seconds each): Debian's ffmpeg posting
 * a live camera ({@code ffmpeg -re ... -f mpegts http://relay/in/cam}) to WebSocket viewers, who get
 * whole MPEG-TS packets, a late joiner under {@code start=keyframe} starting at a keyframe and a
 * slow viewer under {@code max-latency} kept current by skipping; and curl uploading a 24 MiB file
 * on a {@code slow=backpressure} stream to a subscriber that reads slowly: byte-exact (SHA-256), the
 * relay holding the upload back through TCP rather than buffering it.
 */
class HttpIngestToolsIT {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int VIDEO_SECONDS = 8;
    /** What the relay may hold of an upload at once: see {@link #aCurlUploadArrivesByteExactAtASlowSubscriber}. */
    private static final long IN_FLIGHT_BOUND = 8L * 1024 * 1024;
    private static final int FILE_BYTES = 24 * 1024 * 1024;

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .maxClientQueueBytes(256 * 1024)
            .routing(new RoutingTable(RoutingTable.parseAll(List.of(
                    "/cam/**:start=keyframe",
                    "/live/**:start=keyframe,max-latency=500ms",
                    "/files/**:slow=backpressure")))));

    @TempDir
    Path dir;

    private Topic topic(String name) {
        return relay.server().topics().get(new TopicKey(OneToMany.INSTANCE, name));
    }

    /** ffmpeg encoding its test pattern in real time, as jsmpeg's docs have a camera do, posting to {@code path}. */
    private Process ffmpeg(String path) throws IOException {
        String ffmpeg = Tools.require("ffmpeg", "ffmpeg");
        try {
            return new ProcessBuilder(ffmpeg, "-hide_banner", "-loglevel", "error", "-re",
                    "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", Integer.toString(VIDEO_SECONDS),
                    // Constant rate: a test pattern alone compresses to a third of a real camera's stream.
                    "-c:v", "mpeg1video", "-b:v", "800k", "-minrate", "800k", "-maxrate", "800k", "-bufsize", "400k",
                    "-bf", "0", "-g", "25",
                    "-f", "mpegts", "http://127.0.0.1:" + relay.port() + path)
                    .redirectErrorStream(true).redirectOutput(dir.resolve("ffmpeg.log").toFile()).start();
        } catch (IOException e) {
            throw new AssertionError("ffmpeg did not start", e);
        }
    }

    private String log(String name) throws IOException {
        Path p = dir.resolve(name);
        return Files.exists(p) ? Files.readString(p) : "";
    }

    /** Every message whole packets of MPEG-TS, each starting with a sync byte. */
    private static void assertWholePackets(List<byte[]> messages, String who) {
        for (int i = 0; i < messages.size(); i++) {
            byte[] m = messages.get(i);
            assertEquals(0, m.length % TsStream.PACKET, who + " message " + i + ": " + m.length + " bytes");
            for (int at = 0; at < m.length; at += TsStream.PACKET) {
                assertEquals(0x47, m[at], who + " message " + i + ": packet at " + at + " lost its sync byte");
            }
        }
    }

    private static int keyframes(List<byte[]> messages) {
        int n = 0;
        for (byte[] m : messages) {
            for (int at = 0; at < m.length; at += TsStream.PACKET) {
                if (TsStream.isRandomAccess(m, at)) {
                    n++;
                }
            }
        }
        return n;
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void ffmpegPostsACameraToViewersAndALateJoinerStartsAtAKeyframe() throws Exception {
        try (NettyClient early = NettyClient.connect(relay.ws("/out/cam/1"))) {
            await("early viewer joined", WAIT, () -> topic("cam/1") != null);
            Process camera = ffmpeg("/in/cam/1");
            try {
                List<byte[]> earlyGot = new ArrayList<>();
                long[] earlyBytes = {0};
                // Three keyframes (a keyframe a second), then a late viewer.
                while (keyframes(earlyGot) < 3) {
                    byte[] m = early.take(WAIT).data();
                    earlyGot.add(m);
                    earlyBytes[0] += m.length;
                }
                Member poster = null;
                for (Member m : topic("cam/1").members()) {
                    if (m.route().role() == Role.PUBLISHER) {
                        poster = m;
                    }
                }
                assertTrue(poster != null && poster.client().userAgent().startsWith("Lavf/")
                        && poster.client().remoteAddress().startsWith("127.0.0.1:"),
                        "ffmpeg is the stream's publisher, with its address and user agent: "
                                + (poster == null ? null : poster.client()));

                try (NettyClient late = NettyClient.connect(relay.ws("/out/cam/1"))) {
                    assertTrue(camera.waitFor(VIDEO_SECONDS + 20, TimeUnit.SECONDS), "ffmpeg ends with its input");
                    assertEquals(0, camera.exitValue(), "ffmpeg: the relay answered its POST 200\n" + log("ffmpeg.log"));
                    await("the stream ended", WAIT, () -> topic("cam/1").size() == 2);
                    long total = topic("cam/1").totals()[1];

                    Received r;
                    while (earlyBytes[0] < total) {
                        r = early.take(WAIT);
                        earlyGot.add(r.data());
                        earlyBytes[0] += r.data().length;
                    }
                    assertEquals(total, earlyBytes[0], "the early viewer got every byte");
                    assertWholePackets(earlyGot, "early");
                    assertTrue(keyframes(earlyGot) >= VIDEO_SECONDS - 1, keyframes(earlyGot) + " keyframes");

                    List<byte[]> lateGot = new ArrayList<>();
                    while ((r = late.poll(Duration.ofSeconds(2))) != null) {
                        lateGot.add(r.data());
                    }
                    assertTrue(lateGot.size() > 1, "the late viewer got the stream");
                    assertTrue(TsStream.isRandomAccess(lateGot.get(0), 0), "the late viewer starts at a keyframe");
                    assertWholePackets(lateGot, "late");
                    ByteArrayOutputStream lateBytes = new ByteArrayOutputStream();
                    lateGot.forEach(lateBytes::writeBytes);
                    ByteArrayOutputStream earlyAll = new ByteArrayOutputStream();
                    earlyGot.forEach(earlyAll::writeBytes);
                    byte[] e = earlyAll.toByteArray();
                    byte[] l = lateBytes.toByteArray();
                    assertArrayEquals(java.util.Arrays.copyOfRange(e, e.length - l.length, e.length), l,
                            "from its keyframe on, the late viewer's bytes are the stream's");
                }
            } finally {
                camera.destroyForcibly();
            }
        }
    }

    /**
     * A viewer reading at 40 % of the camera's rate on a {@code max-latency=500ms} stream: it loses
     * messages (skips) rather than falling behind, what it gets is whole packets, and when the camera
     * stops it is not seconds behind (without the bound it would be about 60 % of the stream behind).
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aSlowViewerOfAMaxLatencyStreamSkipsAndStaysCurrent() throws Exception {
        try (RawClient slow = new RawClient(relay.port(), 2048)) {
            assertTrue(slow.upgrade("/out/live/1").startsWith("HTTP/1.1 101"));
            await("viewer joined", WAIT, () -> topic("live/1") != null);
            List<byte[]> got = new ArrayList<>();
            long[] lastAt = {0};
            AtomicReference<Throwable> failed = new AtomicReference<>();
            double rate = 0.4 * 100_000; // 800 kbit/s and the TS overhead: about 100 KB/s
            Thread reader = new Thread(() -> {
                try {
                    long start = System.nanoTime();
                    long bytes = 0;
                    RawClient.Frame f;
                    while ((f = slow.readFrame(3_000)) != null) {
                        if (f.opcode() == 0x9) {
                            slow.send(RawClient.frame(0x8A, f.payload(), true));
                            continue;
                        }
                        synchronized (got) {
                            got.add(f.payload());
                            lastAt[0] = System.nanoTime();
                        }
                        bytes += f.payload().length;
                        long wait = start + (long) (bytes / rate * 1e9) - System.nanoTime();
                        if (wait > 0) {
                            Thread.sleep(wait / 1_000_000);
                        }
                    }
                } catch (java.net.SocketTimeoutException e) {
                    // the stream has ended
                } catch (Throwable e) {
                    failed.set(e);
                }
            }, "slow-viewer");
            reader.setDaemon(true);
            reader.start();
            Process camera = ffmpeg("/in/live/1");
            try {
                assertTrue(camera.waitFor(VIDEO_SECONDS + 20, TimeUnit.SECONDS), "ffmpeg ends with its input");
                long endedAt = System.nanoTime();
                assertEquals(0, camera.exitValue(), log("ffmpeg.log"));
                reader.join(30_000);
                assertNull(failed.get(), () -> "reader: " + failed.get());
                synchronized (got) {
                    assertWholePackets(got, "slow");
                    long lag = TimeUnit.NANOSECONDS.toMillis(lastAt[0] - endedAt);
                    assertTrue(lag < 2_500, "the slow viewer's last message came " + lag + " ms after the camera stopped");
                    long received = got.stream().mapToLong(m -> m.length).sum();
                    assertTrue(received < 0.8 * topic("live/1").totals()[1],
                            "it skipped: " + received + " bytes");
                }
            } finally {
                camera.destroyForcibly();
            }
        }
    }

    /**
     * curl uploads 24 MiB ({@code -T}: PUT with a length; {@code --data-binary} with chunked
     * encoding: POST) to a subscriber reading 8 MiB/s on a lossless stream. At every moment what the
     * relay has read and the subscriber not yet is under {@link #IN_FLIGHT_BOUND}: the subscriber's
     * 256 KiB queue, the sockets between them (Linux lets the relay's send buffer grow to 4 MiB) and a
     * message; a relay that buffered the upload would hold most of the file within a second.
     */
    @ParameterizedTest
    @ValueSource(strings = {"-T", "--data-binary"})
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aCurlUploadArrivesByteExactAtASlowSubscriber(String how) throws Exception {
        byte[] file = new byte[FILE_BYTES];
        new SplittableRandom(46).nextBytes(file);
        Path upload = dir.resolve("upload.bin");
        Files.write(upload, file);
        try (RawClient sub = new RawClient(relay.port(), 64 * 1024)) {
            assertTrue(sub.upgrade("/out/files/upload").startsWith("HTTP/1.1 101"));
            await("subscriber joined", WAIT, () -> topic("files/upload") != null);
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            long[] received = {0};
            AtomicReference<Throwable> failed = new AtomicReference<>();
            double rate = 8.0 * 1024 * 1024;
            Thread reader = new Thread(() -> {
                try {
                    long start = System.nanoTime();
                    while (received[0] < FILE_BYTES) {
                        RawClient.Frame f = sub.readFrame(20_000);
                        if (f == null) {
                            throw new AssertionError("nothing within 20 s at " + received[0] + " bytes");
                        }
                        if (f.opcode() == 0x9) {
                            sub.send(RawClient.frame(0x8A, f.payload(), true));
                            continue;
                        }
                        digest.update(f.payload());
                        synchronized (received) {
                            received[0] += f.payload().length;
                        }
                        long wait = start + (long) (received[0] / rate * 1e9) - System.nanoTime();
                        if (wait > 0) {
                            Thread.sleep(wait / 1_000_000);
                        }
                    }
                } catch (Throwable e) {
                    failed.set(e);
                }
            }, "slow-subscriber");
            reader.setDaemon(true);
            reader.start();

            List<String> command = new ArrayList<>(List.of(Tools.require("curl", "curl"), "-sS", "--fail-with-body", "-A", "curl-upload"));
            if (how.equals("-T")) {
                command.addAll(List.of("-T", upload.toString()));
            } else {
                command.addAll(List.of("--data-binary", "@" + upload, "-H", "Transfer-Encoding: chunked"));
            }
            command.add("http://127.0.0.1:" + relay.port() + "/in/files/upload");
            Process curl = new ProcessBuilder(command).redirectOutput(dir.resolve("curl.out").toFile())
                    .redirectError(dir.resolve("curl.err").toFile()).start();
            try {
                long maxInFlight = 0;
                while (reader.isAlive()) {
                    Topic t = topic("files/upload");
                    long in = t == null ? FILE_BYTES : t.totals()[1];
                    long read;
                    synchronized (received) {
                        read = received[0];
                    }
                    maxInFlight = Math.max(maxInFlight, in - read);
                    reader.join(20);
                }
                assertNull(failed.get(), () -> "subscriber: " + failed.get());
                assertTrue(curl.waitFor(30, TimeUnit.SECONDS), "curl ends");
                assertEquals(0, curl.exitValue(), log("curl.out") + log("curl.err"));
                JsonNode summary = JSON.readTree(log("curl.out"));
                assertEquals("/in/files/upload", summary.get("stream").asText());
                assertEquals(FILE_BYTES, summary.get("bytes").asLong());
                assertArrayEquals(MessageDigest.getInstance("SHA-256").digest(file), digest.digest(), "SHA-256");
                assertTrue(maxInFlight < IN_FLIGHT_BOUND, "the relay held " + maxInFlight + " bytes of the upload at once");
            } finally {
                curl.destroyForcibly();
            }
        }
    }
}

package dev.crossbar.server.stream;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Real MPEG-TS video for the stream tests: ffmpeg's output, either the fixtures committed with
 * crossbar-core's tests (made by its {@code generate.sh}, with ffprobe's keyframe positions) or
 * made now by Debian's ffmpeg. And the one fact about TS the tests check: whether a packet is a
 * random-access point (a keyframe's first packet).
 */
final class TsStream {

    static final int PACKET = 188;

    private TsStream() {
    }

    static byte[] fixture(String name) {
        try (InputStream in = TsStream.class.getResourceAsStream("/dev/crossbar/core/video/" + name)) {
            if (in == null) {
                throw new AssertionError("fixture missing from crossbar-core's test-jar: " + name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** ffprobe's byte positions of the fixture's keyframe packets. */
    static List<Integer> keyframes(String name) {
        List<Integer> out = new ArrayList<>();
        for (String line : new String(fixture(name + ".keyframes"), StandardCharsets.US_ASCII).split("\n")) {
            if (!line.isBlank()) {
                out.add(Integer.parseInt(line.trim()));
            }
        }
        return out;
    }

    /**
     * MPEG-1 video as jsmpeg plays it, made by ffmpeg now: {@code seconds} of a test pattern at 30
     * fps, a keyframe every {@code gop} frames, at {@code kbps} (constant).
     */
    static byte[] ffmpeg(int seconds, int gop, int kbps) throws IOException, InterruptedException {
        String ffmpeg = dev.crossbar.server.testing.Tools.require("ffmpeg", "ffmpeg");
        Process p;
        try {
            p = new ProcessBuilder(ffmpeg, "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
                    "testsrc=size=320x240:rate=30", "-t", Integer.toString(seconds), "-c:v", "mpeg1video",
                    // Constant rate: a test pattern alone compresses to a third of a real camera's stream.
                    "-b:v", kbps + "k", "-minrate", kbps + "k", "-maxrate", kbps + "k", "-bufsize", kbps / 2 + "k", "-g", Integer.toString(gop), "-f", "mpegts", "-")
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            throw new AssertionError("ffmpeg is needed (Debian: apt-get install ffmpeg; .ci/run installs it)", e);
        }
        byte[] ts = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0 || ts.length == 0) {
            throw new AssertionError("ffmpeg failed to make the test stream");
        }
        return ts;
    }

    /** Whether the packet at {@code at} starts a PES and sets random_access_indicator. */
    static boolean isRandomAccess(byte[] ts, int at) {
        return ts.length >= at + 6 && ts[at] == 0x47 && (ts[at + 1] & 0x40) != 0 && (ts[at + 3] & 0x20) != 0
                && (ts[at + 4] & 0xFF) > 0 && (ts[at + 5] & 0x40) != 0;
    }

    /** The stream cut into messages of {@code size} bytes (the last shorter), as a camera sends it. */
    static List<byte[]> chunks(byte[] ts, int size) {
        List<byte[]> out = new ArrayList<>();
        for (int at = 0; at < ts.length; at += size) {
            out.add(java.util.Arrays.copyOfRange(ts, at, Math.min(ts.length, at + size)));
        }
        return out;
    }
}

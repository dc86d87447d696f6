package dev.crossbar.core.video;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * The MPEG-TS files made by {@code generate.sh} beside them (real ffmpeg output) and ffprobe's
 * keyframe positions for each, the oracle the tracker is checked against; and the ways a camera
 * chunks a stream into WebSocket messages.
 */
final class TsFixture {

    static final String MPEG1_G60 = "mpeg1-g60";
    static final String MPEG1_G30 = "mpeg1-g30";
    static final String H264_G30 = "h264-g30";

    private TsFixture() {
    }

    static byte[] bytes(String name) {
        return resource(name + ".ts");
    }

    /** ffprobe's byte positions of the keyframe packets. */
    static List<Long> keyframes(String name) {
        List<Long> out = new ArrayList<>();
        for (String line : new String(resource(name + ".keyframes"), StandardCharsets.US_ASCII).split("\n")) {
            if (!line.isBlank()) {
                out.add(Long.parseLong(line.trim()));
            }
        }
        return out;
    }

    /** A copy with random_access_indicator cleared in every packet: keyframes only by content. */
    static byte[] withoutRandomAccessIndicator(byte[] ts) {
        byte[] out = ts.clone();
        for (int at = 0; at + TsPacket.SIZE <= out.length; at += TsPacket.SIZE) {
            boolean adaptation = (out[at + 3] & 0x20) != 0;
            if (adaptation && (out[at + 4] & 0xFF) > 0) {
                out[at + 5] &= ~0x40;
            }
        }
        return out;
    }

    /** Whether the packet at {@code at} starts a PES and sets random_access_indicator. */
    static boolean isRandomAccessPacket(byte[] ts, int at) {
        return ts[at] == TsPacket.SYNC && (ts[at + 1] & 0x40) != 0 && (ts[at + 3] & 0x20) != 0
                && (ts[at + 4] & 0xFF) > 0 && (ts[at + 5] & 0x40) != 0;
    }

    /** Message lengths covering {@code total} bytes, each from {@code sizes}. */
    static List<Integer> chunks(int total, IntSupplier sizes) {
        List<Integer> out = new ArrayList<>();
        for (int done = 0; done < total; ) {
            int n = Math.min(Math.max(1, sizes.getAsInt()), total - done);
            out.add(n);
            done += n;
        }
        return out;
    }

    /** A camera's chunkings: whole packets, a pipe's 4096, odd fixed sizes, random with a fixed seed. */
    static List<Chunking> cameraChunkings() {
        return List.of(
                new Chunking("188", () -> () -> 188),
                new Chunking("188x7", () -> () -> 188 * 7),
                new Chunking("188x22", () -> () -> 188 * 22),
                new Chunking("4096", () -> () -> 4096),
                new Chunking("1000", () -> () -> 1000),
                new Chunking("100", () -> () -> 100),
                new Chunking("random 1..40 seed 11", seeded(11, 40)),
                new Chunking("random 1..8192 seed 42", seeded(42, 8192)),
                new Chunking("random 1..400 seed 7", seeded(7, 400)));
    }

    private static Supplier<IntSupplier> seeded(long seed, int max) {
        return () -> {
            Random random = new Random(seed);
            return () -> 1 + random.nextInt(max);
        };
    }

    /** A named way of cutting a stream into messages; each {@link #lengths} call starts afresh. */
    record Chunking(String name, Supplier<IntSupplier> sizes) {
        List<Integer> lengths(int total) {
            return chunks(total, sizes.get());
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private static byte[] resource(String file) {
        try (InputStream in = TsFixture.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("missing test resource " + file + " (see generate.sh)");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package dev.crossbar.bench.soak;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the soak's clients sent, received and missed, and how their connections ended. Thread-safe:
 * every client writes here from its own thread.
 *
 * <p>A live message missing at several receivers on one node is one loss of that node (its link lost
 * it once, and counted it once), so missing messages are counted once per stream, node and number:
 * what a node's counters must account for.
 */
final class Ledger {

    /** One kind of live stream's figures. */
    static final class Flow {
        final AtomicLong sent = new AtomicLong();
        final AtomicLong received = new AtomicLong();
        /** Messages missing at a receiver (a number skipped), once per stream, node and number. */
        final AtomicLong missing = new AtomicLong();
        /** Messages that came twice or out of order. */
        final AtomicLong disorder = new AtomicLong();
        /** Messages whose bytes were not any message sent. */
        final AtomicLong corrupt = new AtomicLong();
    }

    /** Corrupt messages described, for whoever looks for the cause. */
    static final int SAMPLES = 10;

    final Flow video = new Flow();
    final Flow data = new Flow();
    /** Video read by {@link RawViewer}s (the storm's check on the JDK's client). */
    final Flow rawVideo = new Flow();
    /** Lossless files: per receiver, how each transfer ended. */
    final AtomicLong filesComplete = new AtomicLong();
    /** A receiver told by a close frame (4010 with what was lost, or another code) before it had all. */
    final AtomicLong filesTold = new AtomicLong();
    /** A receiver whose connection broke (its node died) before it had all: it knows. */
    final AtomicLong filesBroken = new AtomicLong();
    /** A receiver with every message written, from a publisher whose connection broke (its node died). */
    final AtomicLong filesCut = new AtomicLong();
    /** A receiver left with less than was sent, or other bytes, and told nothing: the defect sought. */
    final AtomicLong filesSilent = new AtomicLong();
    final AtomicLong fileMessages = new AtomicLong();

    private final Map<String, Set<Long>> missingByStream = new HashMap<>();
    /** What the first corrupt messages looked like, for whoever finds the cause. */
    private final List<String> corruptSamples = new ArrayList<>();
    private final Map<String, Long> endings = new TreeMap<>();
    /** Where the sampled corrupt messages are written whole ({@code corrupt-N.bin}), or null. */
    private final Path dumps;

    Ledger() {
        this(null);
    }

    Ledger(Path dumps) {
        this.dumps = dumps;
    }

    /** Records numbers {@code from} (inclusive) to {@code to} (exclusive) of {@code l}'s stream as missing on {@code node}. */
    synchronized void missing(Flow flow, int node, Label l, long from, long to) {
        Set<Long> seqs = missingByStream.computeIfAbsent(
                (flow == video ? "v" : "d") + l.stream() + "/" + l.epoch() + "@" + node, k -> new HashSet<>());
        for (long s = from; s < to; s++) {
            if (seqs.add(s)) {
                flow.missing.incrementAndGet();
            }
        }
    }

    /** Counts how a connection ended, by its code and the reason's words (numbers left out). */
    synchronized void ended(String role, Ws.Ending e) {
        String reason = e.closeFrame() ? e.code() + " " + e.reason().replaceAll("\\d+", "N")
                : "broken: " + e.toString().replaceAll("@[0-9a-f]+|\\d+", "N");
        endings.merge(role + ": " + reason, 1L, Long::sum);
    }

    /** Keeps a description of a corrupt message (the first {@value #SAMPLES}). */
    synchronized void corrupt(Flow flow, int node, byte[] payload, boolean text) {
        flow.corrupt.incrementAndGet();
        if (corruptSamples.size() < SAMPLES) {
            // The wall clock, to set beside the nodes' logs.
            StringBuilder b = new StringBuilder(Instant.now().toString()).append(' ')
                    .append(flow == video ? "video" : flow == rawVideo ? "raw video" : "data").append(" on node ").append(node)
                    .append(text ? ", text, " : ", binary, ").append(payload.length).append(" bytes (")
                    .append(payload.length % VideoFrames.PACKET).append(" over whole packets), first bytes ")
                    .append(HexFormat.of().formatHex(payload, 0, Math.min(16, payload.length)));
            if (!text && payload.length >= VideoFrames.PACKET) {
                ByteBuffer tail = ByteBuffer.wrap(payload, payload.length - VideoFrames.PACKET, 20);
                b.append(", last packet ").append(HexFormat.of().formatHex(payload,
                        payload.length - VideoFrames.PACKET, payload.length - VideoFrames.PACKET + 4));
                tail.position(tail.position() + 4);
                b.append(" label? ").append(tail.getInt()).append('/').append(tail.getInt()).append('/').append(tail.getLong());
            }
            if (dumps != null) {
                Path f = dumps.resolve("corrupt-" + corruptSamples.size() + ".bin");
                try {
                    Files.write(f, payload);
                    b.append(", whole in ").append(f.getFileName());
                } catch (IOException e) {
                    b.append(", not written: ").append(e);
                }
            }
            corruptSamples.add(b.toString());
        }
    }

    synchronized List<String> corruptSamples() {
        return List.copyOf(corruptSamples);
    }

    synchronized Map<String, Long> endings() {
        return new TreeMap<>(endings);
    }
}

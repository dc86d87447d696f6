package dev.crossbar.bench.load;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import java.util.BitSet;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Checks every message one receiver gets against what its senders sent: each must be exactly one
 * sent message (sender, sequence, length and content), arriving once.
 *
 * <p>A received message whose length differs from the declared one is a <em>merged</em> frame if it
 * is a run of whole messages laid end to end (what a relay that coalesces its queue sends); its
 * parts are checked and counted as delivered-in-a-merge, since their bytes did arrive. Anything
 * else that does not match is <em>corrupt</em>. Per sender, a sequence below the highest seen is a
 * reorder (or a duplicate if already seen); sequences never seen are lost, counted at the end
 * against what the sender sent ({@link #unique(int)}).
 *
 * <p>Single writer: {@link #onMessage} runs on the receiver's event loop. The counters that a
 * run reads while it is going ({@link #delivered()}, {@link #deliveredBytes()},
 * {@link #highestSeq(int)}) are published with opaque stores; the rest are read after the loops stop.
 */
final class IntegrityChecker {

    private final MessageFormat format;
    private final Stream[] streams;
    private final SendTimes tinySendTimes;
    private final RunClock clock;
    private final LatencyRecorder latency;

    private final AtomicLong delivered = new AtomicLong();
    private final AtomicLong deliveredBytes = new AtomicLong();
    private long frames;
    private long corrupt;
    private long mergedFrames;
    private long mergedMessages;
    private long duplicates;
    private long reordered;
    /** This receiver's measured latencies, summed, and how many: its mean, to compare receivers. */
    private long latencySumNanos;
    private long latencies;

    /**
     * @param senders       how many senders (ids 0..senders-1) this receiver hears
     * @param tinySendTimes send times of sender 0 when the format is tiny, else null
     * @param latency       where latencies of measured messages go (this loop's, for this part of
     *                      the run), or null
     */
    IntegrityChecker(MessageFormat format, int senders, SendTimes tinySendTimes, RunClock clock,
                     LatencyRecorder latency) {
        this.format = requireNonNull(format, "format");
        if (senders < 1 || senders > MessageFormat.MAX_SENDERS) {
            throw new IllegalArgumentException("senders: " + senders + " (expected: 1.." + MessageFormat.MAX_SENDERS + ")");
        }
        if (format.isTiny() && (senders != 1 || tinySendTimes == null)) {
            throw new IllegalArgumentException("a " + format.size() + "-byte message carries no sender or timestamp"
                    + " (expected: one sender and its send times, or size >= " + MessageFormat.HEADER_BYTES + ")");
        }
        this.streams = new Stream[senders];
        for (int i = 0; i < senders; i++) {
            streams[i] = new Stream();
        }
        this.tinySendTimes = tinySendTimes;
        this.clock = requireNonNull(clock, "clock");
        this.latency = latency;
    }

    /** Checks one whole received message; borrows {@code msg} (the caller releases it). */
    void onMessage(ByteBuf msg, long nowNanos) {
        frames++;
        int length = msg.readableBytes();
        int start = msg.readerIndex();
        int size = format.size();
        if (length == size) {
            if (!checkOne(msg, start, nowNanos, false)) {
                corrupt++;
            }
            return;
        }
        // A coalesced frame is whole messages end to end (all of our one size); anything else is corrupt.
        if (length > size && length % size == 0) {
            int parts = length / size;
            int good = 0;
            for (int i = 0; i < parts; i++) {
                if (checkOne(msg, start + i * size, nowNanos, true)) {
                    good++;
                }
            }
            if (good == parts) {
                mergedFrames++;
                return;
            }
        }
        corrupt++;
    }

    /** Checks the message at {@code off}; true if it is a sent message (and counts it). */
    private boolean checkOne(ByteBuf buf, int off, long nowNanos, boolean merged) {
        int size = format.size();
        long seq;
        int sender;
        long sentAt;
        if (format.isTiny()) {
            sender = 0;
            seq = unwrap24(buf.getUnsignedMedium(off), streams[0].highest);
            if (seq < 0) {
                return false;
            }
            sentAt = tinySendTimes.get(seq);
        } else {
            if (buf.getUnsignedShort(off + MessageFormat.OFF_MAGIC) != MessageFormat.MAGIC
                    || buf.getInt(off + MessageFormat.OFF_LENGTH) != size) {
                return false;
            }
            sender = buf.getUnsignedShort(off + MessageFormat.OFF_SENDER);
            seq = buf.getLong(off + MessageFormat.OFF_SEQ);
            sentAt = buf.getLong(off + MessageFormat.OFF_SEND_NANOS);
            if (sender >= streams.length || seq < 0 || seq > Integer.MAX_VALUE) {
                return false;
            }
        }
        if (!format.bodyMatches(buf, off + format.headerLength(), seq)) {
            return false;
        }
        Stream s = streams[sender];
        int i = (int) seq;
        if (seq <= s.highest) {
            if (s.seen.get(i)) {
                duplicates++;
                return true;
            }
            reordered++;
        } else {
            s.highest = seq;
            s.highestPublished.setOpaque(seq);
        }
        s.seen.set(i);
        s.unique++;
        if (merged) {
            mergedMessages++;
        } else {
            delivered.setOpaque(delivered.getPlain() + 1);
        }
        deliveredBytes.setOpaque(deliveredBytes.getPlain() + size);
        if (latency != null && sentAt >= clock.measureFromNanos()) {
            long nanos = latency.record(sentAt, nowNanos);
            latencySumNanos += nanos;
            latencies++;
        }
        return true;
    }

    /** Mean latency of this receiver's measured messages in nanoseconds, or -1 if none was measured. */
    double meanLatencyNanos() {
        return latencies == 0 ? -1 : (double) latencySumNanos / latencies;
    }

    /** The full sequence whose low 24 bits are {@code low}, nearest to {@code highest + 1}; -1 if negative. */
    static long unwrap24(int low, long highest) {
        long next = highest + 1;
        long candidate = (next & ~0xFFFFFFL) | low;
        if (candidate < next - (1 << 23)) {
            candidate += 1 << 24;
        } else if (candidate > next + (1 << 23)) {
            candidate -= 1 << 24;
        }
        return candidate;
    }

    /** Messages received whole, one per frame; any thread. */
    long delivered() {
        return delivered.getOpaque();
    }

    /** Payload bytes of every sent message received, merged or not; any thread. */
    long deliveredBytes() {
        return deliveredBytes.getOpaque();
    }

    /** Highest sequence seen from {@code sender}, -1 if none; any thread. */
    long highestSeq(int sender) {
        return streams[sender].highestPublished.getOpaque();
    }

    /** Distinct messages received from {@code sender}, merged or not. */
    long unique(int sender) {
        return streams[sender].unique;
    }

    int senders() {
        return streams.length;
    }

    long frames() {
        return frames;
    }

    long corrupt() {
        return corrupt;
    }

    long mergedFrames() {
        return mergedFrames;
    }

    long mergedMessages() {
        return mergedMessages;
    }

    long duplicates() {
        return duplicates;
    }

    long reordered() {
        return reordered;
    }

    /** What one receiver knows about one sender's stream. */
    private static final class Stream {
        final BitSet seen = new BitSet();
        final AtomicLong highestPublished = new AtomicLong(-1);
        long highest = -1;
        long unique;
    }
}

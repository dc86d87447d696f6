package dev.crossbar.server.session;

import java.util.concurrent.TimeUnit;

/**
 * How fast one receiver reads, for a {@code max-latency} stream: while messages wait in its latency
 * queue, the channel and the socket are full, and the socket takes bytes exactly as fast as the
 * receiver reads them. So its pace is measured over those periods only, in a window of the last few
 * seconds of them, from the bytes that left the channel ({@code drained}). Receiver's event loop only.
 *
 * <p>A pace not measured for {@link #WINDOW_NANOS} is forgotten. Without that, one slow moment (the
 * receiver's process descheduled, say) could set a pace so low that every later message looks
 * stale and is skipped at once; with nothing left waiting, nothing would measure the pace again,
 * and the receiver would get only keyframes however fast it read.
 */
final class ReceiverPace {

    /** A pace is known after this long with messages waiting. */
    static final long MIN_SAMPLE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** ... and judged over about this much of the latest such time. */
    static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(2);

    private double bytesPerNano;
    private long markBytes;
    private long markNanos;
    /** Whether messages waited when last looked at: the receiver set the pace since. */
    private boolean backlogged;
    private long windowBytes;
    private long windowNanos;
    /** When messages last waited: the pace is as old as this. */
    private long measuredAtNanos;

    /**
     * Called when a message arrives and when the channel drains, before the queue changes.
     *
     * @param drained bytes that have left the channel for the socket so far
     */
    void observe(long drained, long now) {
        if (!backlogged && bytesPerNano > 0 && now - measuredAtNanos > WINDOW_NANOS) {
            bytesPerNano = 0;
            windowBytes = 0;
            windowNanos = 0;
        }
        if (backlogged) {
            measuredAtNanos = now;
            windowBytes += drained - markBytes;
            windowNanos += now - markNanos;
            if (windowNanos > MIN_SAMPLE_NANOS) {
                bytesPerNano = (double) windowBytes / windowNanos;
                if (windowNanos > WINDOW_NANOS) {
                    windowBytes /= 2;
                    windowNanos /= 2;
                }
            }
        }
        markBytes = drained;
        markNanos = now;
    }

    /** Whether messages wait now, after the queue changed. */
    void backlogged(boolean waiting) {
        backlogged = waiting;
    }

    /** How long {@code bytes} ahead of a message take the receiver to read, or {@code unknown} before it is measured. */
    long nanosFor(long bytes, long unknown) {
        return bytesPerNano > 0 ? (long) (bytes / bytesPerNano) : unknown;
    }
}

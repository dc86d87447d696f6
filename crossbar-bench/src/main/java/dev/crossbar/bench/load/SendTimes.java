package dev.crossbar.bench.load;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Send times of one sender's recent messages, by sequence: the latency source for tiny messages,
 * whose few bytes cannot carry a timestamp. A ring: an entry is valid while fewer than
 * {@link #CAPACITY} later messages have been sent, which the in-flight window guarantees.
 */
final class SendTimes {

    static final int CAPACITY = 1 << 20;
    private static final int MASK = CAPACITY - 1;

    private final AtomicLongArray times = new AtomicLongArray(CAPACITY);

    /** Sender's loop only. */
    void put(long seq, long nanos) {
        times.setRelease((int) (seq & MASK), nanos);
    }

    /** Any thread; the message's arrival happened after its {@link #put}. */
    long get(long seq) {
        return times.getAcquire((int) (seq & MASK));
    }
}

package dev.crossbar.bench.load;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Sends one connection's messages, on its event loop, until the run's stop time or its message
 * cap: paced at a rate, or as fast as the window allows.
 *
 * <p>The window bounds messages in flight: sent but not yet seen by every tracked receiver (by
 * highest sequence, so a message the relay dropped does not hold the window shut). Each message is
 * flushed as it is written, one frame per write, as browsers, websocat and the Go or Python
 * clients do; with a batch of N, N frames share one flush (and so, mostly, one system call), which
 * lets the relay read many messages per read and hides its per-message cost. When the window is
 * full the sender parks, and a receiver's
 * read {@link #wake()}s it; when the socket is full it waits for writability. A relay that stops
 * relaying therefore stops the sender, and the run still ends on time.
 */
final class Sender implements Runnable {

    /** Messages written per pass before yielding the loop to reads; also the largest batch. */
    static final int MAX_PASS = 256;
    /** Pacing ticks are no finer than this (the timer's useful resolution) ... */
    static final long MIN_TICK_NANOS = 50_000;
    /** ... and no coarser than this, so a slow rate still starts promptly. */
    static final long MAX_TICK_NANOS = 100_000_000;
    /** A paced sender that fell behind sends at most this much of its rate at once to catch up. */
    static final double CATCH_UP_SECONDS = 0.010;

    private final Channel channel;
    private final int id;
    private final MessageFormat format;
    private final SendTimes sendTimes;
    private final RunClock clock;
    private final double ratePerSecond;
    private final int window;
    private final int batch;
    private final LongSupplier acked;
    private final long maxMessages;
    private final long tickNanos;
    /** Most messages a paced sender sends at once to catch up: a window, 10 ms worth, or 2. */
    private final long catchUpLimit;

    private final AtomicLong sent = new AtomicLong();
    private final AtomicBoolean parked = new AtomicBoolean();
    private long startNanos;
    /** Set on the loop when sending begins: nothing (a writability event) starts it earlier. */
    private boolean started;
    private boolean tickScheduled;
    private boolean stopped;
    /**
     * A pass is under way. A flush inside it can drain the socket and fire writability, whose
     * handler calls {@link #run()} on this same stack; that nested pass would write from a sequence
     * the outer one has already used. The outer pass re-checks writability before every message,
     * so the nested call has nothing to add and returns.
     */
    private boolean inPass;

    /**
     * @param ratePerSecond messages per second, or 0 for as fast as the window allows
     * @param window        most messages in flight, or 0 for no window (paced senders only)
     * @param batch         messages written per flush: 1 is one frame per write (1..{@link #MAX_PASS})
     * @param acked         highest sequence every tracked receiver has seen (-1 for none); read
     *                      only when {@code window > 0}
     */
    Sender(Channel channel, int id, MessageFormat format, SendTimes sendTimes, RunClock clock,
           double ratePerSecond, int window, int batch, LongSupplier acked, long maxMessages) {
        this.channel = requireNonNull(channel, "channel");
        this.id = id;
        this.format = requireNonNull(format, "format");
        this.sendTimes = sendTimes;
        this.clock = requireNonNull(clock, "clock");
        if (ratePerSecond <= 0 && window <= 0) {
            throw new IllegalArgumentException("rate " + ratePerSecond + " and window " + window
                    + " (expected: a rate, a window, or both)");
        }
        this.ratePerSecond = ratePerSecond;
        this.window = window;
        if (batch < 1 || batch > MAX_PASS) {
            throw new IllegalArgumentException("batch: " + batch + " (expected: 1.." + MAX_PASS + ")");
        }
        this.batch = batch;
        this.acked = acked;
        this.maxMessages = maxMessages;
        long period = ratePerSecond > 0 ? (long) (1e9 / ratePerSecond) : MIN_TICK_NANOS;
        this.tickNanos = Math.max(MIN_TICK_NANOS, Math.min(MAX_TICK_NANOS, period));
        this.catchUpLimit = Math.max(Math.max(2, window), (long) Math.ceil(ratePerSecond * CATCH_UP_SECONDS));
    }

    /** Starts sending now, on the channel's loop. */
    void start() {
        start(0);
    }

    /**
     * Starts sending after {@code delayNanos}, on the channel's loop: senders of a campus start
     * spread over their period, as cameras and sensors that are not in step.
     */
    void start(long delayNanos) {
        Runnable begin = () -> {
            startNanos = System.nanoTime();
            started = true;
            run();
        };
        if (delayNanos <= 0) {
            channel.eventLoop().execute(begin);
        } else {
            channel.eventLoop().schedule(begin, delayNanos, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * Stops sending. The future completes on the loop, after any pass under way, so once it is done
     * {@link #sent()} is final: a drain that counted before a last pass finished would close the
     * connection under a message still being written, and call it lost.
     */
    Future<?> stop() {
        return channel.eventLoop().submit(() -> {
            stopped = true;
        });
    }

    /** Messages written so far; any thread. */
    long sent() {
        return sent.getOpaque();
    }

    /** A receiver made progress: resume if parked on the window. Any thread; cheap when not parked. */
    void wake() {
        if (parked.get() && parked.compareAndSet(true, false)) {
            channel.eventLoop().execute(this);
        }
    }

    /** One sending pass; loop only. */
    @Override
    public void run() {
        if (stopped || inPass || !started) {
            return;
        }
        inPass = true;
        try {
            pass();
        } finally {
            inPass = false;
        }
    }

    private void pass() {
        long now = System.nanoTime();
        long n = sent.getPlain();
        if (now >= clock.stopNanos() || n >= maxMessages || !channel.isActive()) {
            stopped = true;
            return;
        }
        long allowed = Math.min(MAX_PASS, maxMessages - n);
        if (ratePerSecond > 0) {
            long due = (long) ((now - startNanos) * ratePerSecond / 1e9) + 1;
            if (due - n > catchUpLimit) {
                // Fell behind (window full, socket full, loop busy): forgive the excess rather than
                // burst above the rate later, so a paced run stays at its rate.
                startNanos = now - (long) ((n + catchUpLimit - 1) * 1e9 / ratePerSecond);
                due = n + catchUpLimit;
            }
            allowed = Math.min(allowed, due - n);
        }
        if (window > 0) {
            allowed = Math.min(allowed, windowLeft(n));
        }
        int written = 0;
        int unflushed = 0;
        while (written < allowed && channel.isWritable()) {
            long seq = n + written;
            long t = System.nanoTime();
            ByteBuf frame = MaskedFrames.encode(channel.alloc(), format, id, seq, t,
                    ThreadLocalRandom.current().nextInt());
            if (sendTimes != null) {
                sendTimes.put(seq, t);
            }
            written++;
            sent.setOpaque(seq + 1);
            channel.write(frame, channel.voidPromise());
            if (++unflushed == batch) {
                channel.flush();
                unflushed = 0;
            }
        }
        if (unflushed > 0) {
            channel.flush();
        }
        if (ratePerSecond > 0) {
            if (channel.isWritable()) {
                scheduleTick();
            }
            // Otherwise the socket is full and the handler calls run() when it drains: a sender at a
            // rate its socket cannot take (VBDS's publisher, as fast as TCP allows) does not spin.
        } else if (written == MAX_PASS) {
            channel.eventLoop().execute(this);
        } else if (channel.isWritable()) {
            // Window full: park; re-check after parking so a wake between the check and the park is not lost.
            parked.set(true);
            if (windowLeft(sent.getPlain()) > 0 && parked.compareAndSet(true, false)) {
                channel.eventLoop().execute(this);
            }
        }
        // Otherwise the socket is full and the handler calls run() when it drains.
    }

    private long windowLeft(long sentSoFar) {
        long inFlight = sentSoFar - 1 - acked.getAsLong();
        return window - inFlight;
    }

    private void scheduleTick() {
        if (!tickScheduled) {
            tickScheduled = true;
            channel.eventLoop().schedule(() -> {
                tickScheduled = false;
                run();
            }, tickNanos, TimeUnit.NANOSECONDS);
        }
    }
}

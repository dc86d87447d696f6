package dev.crossbar.bench.load;

import io.netty.channel.Channel;
import java.net.URI;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How soon a relay relays: before a run's own connections, one subscriber connects to a stream of
 * its own, then one publisher, which sends one message as soon as its handshake is done. The time
 * from the subscriber's first connect to that message's arrival is what a lab's first viewer waits
 * on a relay that has just started ({@code firstRelayMs}; on a fresh relay, with {@code --warmup 0},
 * the cold start the target speaks of); the subscriber's handshake alone is
 * {@code firstConnectMs}. The message is checked like any other. The generator's own first
 * connection goes elsewhere beforehand ({@link ClientWarmUp}), so neither figure holds the
 * generator's start-up.
 */
final class FirstContact {

    /** The message: small, a sensor reading's size, with its header (sender, sequence, send time). */
    static final int SIZE = 64;
    /** Longest wait for the message once both are connected; a relay that takes longer is reported as not having relayed it. */
    static final long DELIVERY_TIMEOUT_MILLIS = 1_000;

    /** What was measured; the relay time is null when the message did not arrive in time or arrived damaged. */
    record Result(double connectMs, Double relayMs) {
    }

    private FirstContact() {
    }

    /**
     * Measures on {@code /in/<topic>-first} and {@code /out/<topic>-first}, then closes both.
     *
     * @throws IllegalStateException if either cannot connect within {@code connectTimeoutMillis}
     */
    static Result measure(BenchClient client, URI baseUri, String topic, long connectTimeoutMillis)
            throws InterruptedException {
        ClientWarmUp.run(client);
        MessageFormat format = new MessageFormat(SIZE);
        RunClock clock = new RunClock();
        clock.start(0, Long.MAX_VALUE / 4);
        LatencyRecorder latency = new LatencyRecorder(clock, LatencyMoments.MOMENT_NANOS);
        AtomicLong errors = new AtomicLong();
        BenchHandler subscriber = new BenchHandler(loop -> new IntegrityChecker(format, 1, null, clock, latency), null, errors);
        AtomicLong sentAt = new AtomicLong();
        String stream = topic + "-first";
        long start = System.nanoTime();
        Channel sub = client.connectAll(List.of(URI.create(baseUri + "/out/" + stream)), List.of(subscriber),
                connectTimeoutMillis).get(0);
        long connected = System.nanoTime();
        Channel pub = null;
        try {
            pub = client.connectAll(List.of(URI.create(baseUri + "/in/" + stream)),
                    List.of(new BenchHandler(null, null, errors)), connectTimeoutMillis).get(0);
            Channel p = pub;
            p.eventLoop().execute(() -> {
                long t = System.nanoTime();
                sentAt.set(t);
                p.writeAndFlush(MaskedFrames.encode(p.alloc(), format, 0, 0, t, ThreadLocalRandom.current().nextInt()));
            });
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DELIVERY_TIMEOUT_MILLIS);
            IntegrityChecker checker = subscriber.checker();
            while (checker.delivered() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
        } finally {
            close(sub);
            close(pub);
        }
        IntegrityChecker c = subscriber.checker();
        double connectMs = (connected - start) / 1e6;
        // Read after the close above has run on the subscriber's loop: its counters are final.
        if (c.delivered() != 1 || c.corrupt() != 0 || errors.get() != 0) {
            return new Result(connectMs, null);
        }
        // The message's send time plus its latency is its arrival, on the same clock as start.
        double arrival = sentAt.get() + c.meanLatencyNanos();
        return new Result(connectMs, (arrival - start) / 1e6);
    }

    private static void close(Channel ch) {
        if (ch != null) {
            ch.close().awaitUninterruptibly(LoadRun.CLOSE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        }
    }
}

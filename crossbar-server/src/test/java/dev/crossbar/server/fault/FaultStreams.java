package dev.crossbar.server.fault;

import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.Received;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What a fault test runs from node P to node S while it breaks something, and what became of it:
 * <ul>
 *   <li>a lossless transfer, {@code /in/files/t} ({@code slow=backpressure}): {@link #MESSAGES} binary
 *       messages of 1 MiB written flat out, each numbered; received on S (and on P, locally), each
 *       checked byte for byte and in order, and the whole by SHA-256;</li>
 *   <li>video, {@code /in/cam/t} ({@code start=keyframe}): 30 binary messages of 4 KiB a second
 *       (about 1 Mbit/s), numbered, received on S;</li>
 *   <li>data, {@code /lab/t} (N:N): 50 JSON texts a second from P, received on S.</li>
 * </ul>
 * Every client answers the relay's pings, and records how its connection ended: a close frame's
 * code and reason, or the socket closing without one. Every wait is bounded.
 */
final class FaultStreams implements AutoCloseable {

    /** The rules both nodes run with. */
    static final List<String> ROUTES = List.of("/files/**:slow=backpressure", "/cam/**:start=keyframe");
    static final int MESSAGE = 1024 * 1024;
    static final int MESSAGES = 256;
    /**
     * Topic subscriptions the NATS servers hold once every client has joined: the transfer's topic
     * (P and S: both have a subscriber), its hold and ack subjects (P, the sender), the video's topic
     * (S), the data topic (P and S).
     */
    static final int SUBSCRIPTIONS = 7;

    private static final int VIDEO_BYTES = 4096;
    private static final long VIDEO_EVERY_MILLIS = 33;
    private static final long DATA_EVERY_MILLIS = 20;

    /** How one client's connection ended (code -1: the socket closed without a close frame), and when. */
    record Close(int code, String reason, long atNanos) {
        Close(int code, String reason) {
            this(code, reason, System.nanoTime());
        }

        @Override
        public String toString() {
            return code < 0 ? "socket closed (" + reason + ")" : code + " \"" + reason + "\"";
        }

        /** This close, and how long after {@code fromNanos} it came. */
        String since(long fromNanos) {
            return this + " after " + TimeUnit.NANOSECONDS.toMillis(atNanos - fromNanos) + " ms";
        }
    }

    /** What one receiver got: messages in order, holes and disorder, how it ended, and its arrival times. */
    static final class Receiver {
        final String name;
        volatile long arrived;
        /** Messages that came after a hole (a number skipped). */
        volatile long holes;
        /** Messages whose number was not above the last one's (duplicate or out of order). */
        volatile long disorder;
        /** Lossless: messages whose bytes were not the ones sent. */
        volatile long corrupt;
        volatile Close close;
        final MessageDigest digest = sha256();
        private final long[] times = new long[1 << 16];
        private long next = -1;

        Receiver(String name) {
            this.name = name;
        }

        synchronized void got(long n, long nanos) {
            if (arrived < times.length) {
                times[(int) arrived] = nanos;
            }
            arrived++;
            if (next >= 0 && n > next) {
                holes += n - next;
            } else if (next >= 0 && n < next) {
                disorder++;
            }
            next = Math.max(next, n + 1);
        }

        /** The longest time after {@code fromNanos} with nothing arriving, up to the last arrival. */
        synchronized long longestStallMillis(long fromNanos) {
            long worst = 0;
            long prev = fromNanos;
            int n = (int) Math.min(arrived, times.length);
            for (int i = 0; i < n; i++) {
                if (times[i] > fromNanos) {
                    worst = Math.max(worst, times[i] - prev);
                    prev = times[i];
                }
            }
            return TimeUnit.NANOSECONDS.toMillis(worst);
        }
    }

    final Receiver lossless = new Receiver("lossless on S");
    final Receiver losslessLocal = new Receiver("lossless on P");
    final Receiver video = new Receiver("video on S");
    final Receiver data = new Receiver("data on S");
    /** The lossless publisher: what it wrote, and how its connection ended. */
    volatile long losslessSent;
    volatile Close publisherClose;
    volatile long videoSent;
    volatile long dataSent;
    final MessageDigest sentDigest = sha256();

    private final RawClient pub;
    private final RawClient sub;
    private final RawClient localSub;
    private final NettyClient videoPub;
    private final NettyClient videoSub;
    private final NettyClient dataPub;
    private final NettyClient dataSub;
    private final byte[] block = new byte[MESSAGE];
    private final List<Thread> threads = new ArrayList<>();
    private final CountDownLatch atFault;
    private final int faultAfter;
    /** Set to stop the live senders, then (once what they sent had time to arrive) their receivers. */
    private volatile boolean sendersStopping;
    private volatile boolean stopping;

    /**
     * Connects every client (to node P on {@code pPort}, S on {@code sPort}); call {@link #start} once
     * the NATS servers hold {@link #SUBSCRIPTIONS}.
     *
     * @param faultAfter how many lossless messages are written before {@link #awaitFaultPoint} returns
     */
    FaultStreams(int pPort, int sPort, int faultAfter) throws IOException {
        this.faultAfter = faultAfter;
        this.atFault = new CountDownLatch(1);
        new SplittableRandom(47).nextBytes(block);
        sub = new RawClient(sPort);
        localSub = new RawClient(pPort);
        pub = new RawClient(pPort);
        upgrade(sub, "/out/files/t");
        upgrade(localSub, "/out/files/t");
        upgrade(pub, "/in/files/t");
        videoSub = NettyClient.connect(URI.create("ws://127.0.0.1:" + sPort + "/out/cam/t"));
        videoPub = NettyClient.connect(URI.create("ws://127.0.0.1:" + pPort + "/in/cam/t"));
        dataSub = NettyClient.connect(URI.create("ws://127.0.0.1:" + sPort + "/lab/t"));
        dataPub = NettyClient.connect(URI.create("ws://127.0.0.1:" + pPort + "/lab/t"));
    }

    private static void upgrade(RawClient c, String path) throws IOException {
        String head = c.upgrade(path);
        if (!head.startsWith("HTTP/1.1 101")) {
            throw new AssertionError(path + ": " + head);
        }
    }

    /** The lossless message numbered {@code i}: the block with {@code i} in its first four bytes. */
    byte[] message(int i) {
        byte[] m = block.clone();
        ByteBuffer.wrap(m).putInt(i);
        return m;
    }

    /** Starts every sender and receiver. */
    void start() {
        thread("lossless-publisher", this::publish);
        thread("lossless-publisher-reader", () -> publisherClose = readUntilClosed(pub));
        thread("lossless-subscriber", () -> readLossless(sub, lossless));
        thread("lossless-local-subscriber", () -> readLossless(localSub, losslessLocal));
        thread("live-senders", this::sendLive);
        thread("video-subscriber", () -> readLive(videoSub, video, false));
        thread("data-subscriber", () -> readLive(dataSub, data, true));
    }

    private void thread(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        threads.add(t);
        t.start();
    }

    private void publish() {
        try {
            for (int i = 0; i < MESSAGES; i++) {
                byte[] m = message(i);
                pub.send(RawClient.frame(0x82, m, true));
                sentDigest.update(m);
                losslessSent = i + 1;
                if (i + 1 == faultAfter) {
                    atFault.countDown();
                }
            }
        } catch (IOException e) {
            // The connection broke (its node died, or the relay closed it): publisherClose says how.
        } finally {
            atFault.countDown();
        }
    }

    /** Reads the publisher's socket for the relay's pings and its close frame. */
    private Close readUntilClosed(RawClient c) {
        try {
            while (true) {
                RawClient.Frame f = c.readFrame(600_000);
                if (f == null) {
                    return new Close(-1, "end of stream");
                }
                if (f.opcode() == 0x9) {
                    pong(c, f);
                } else if (f.opcode() == 0x8) {
                    return new Close(f.closeCode(), f.closeReason());
                }
            }
        } catch (IOException e) {
            return new Close(-1, e.toString());
        }
    }

    private static void pong(RawClient c, RawClient.Frame ping) throws IOException {
        c.send(RawClient.frame(0x8A, ping.payload(), true));
    }

    private void readLossless(RawClient c, Receiver r) {
        try {
            while (r.arrived < MESSAGES) {
                RawClient.Frame f = c.readFrame(60_000);
                if (f == null) {
                    r.close = new Close(-1, "end of stream, or nothing for 60 s");
                    return;
                }
                if (f.opcode() == 0x9) {
                    pong(c, f);
                    continue;
                }
                if (f.opcode() == 0x8) {
                    r.close = new Close(f.closeCode(), f.closeReason());
                    return;
                }
                long now = System.nanoTime();
                byte[] m = f.payload();
                int n = m.length >= 4 ? ByteBuffer.wrap(m).getInt() : -1;
                if (f.opcode() != 0x2 || !f.fin() || n < 0 || n >= MESSAGES || !Arrays.equals(m, message(n))) {
                    r.corrupt++;
                }
                r.digest.update(m);
                r.got(n, now);
            }
        } catch (IOException e) {
            r.close = new Close(-1, e.toString());
        }
    }

    private void sendLive() {
        long start = System.nanoTime();
        long nextVideo = 0;
        long nextData = 0;
        boolean videoUp = true;
        boolean dataUp = true;
        byte[] frame = new byte[VIDEO_BYTES];
        while (!sendersStopping && (videoUp || dataUp)) {
            long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            try {
                if (videoUp && elapsed >= nextVideo) {
                    ByteBuffer.wrap(frame).putLong(videoSent);
                    videoPub.sendBinary(frame.clone());
                    videoSent++;
                    nextVideo += VIDEO_EVERY_MILLIS;
                }
            } catch (RuntimeException | AssertionError e) {
                videoUp = false; // its node is gone
            }
            try {
                if (dataUp && elapsed >= nextData) {
                    dataPub.sendText("{\"n\":" + dataSent + "}");
                    dataSent++;
                    nextData += DATA_EVERY_MILLIS;
                }
            } catch (RuntimeException | AssertionError e) {
                dataUp = false;
            }
            sleep(Math.max(1, Math.min(nextVideo, nextData) - elapsed));
        }
    }

    private void readLive(NettyClient c, Receiver r, boolean text) {
        try {
            while (true) {
                Received m = c.poll(Duration.ofMillis(100));
                if (m == null) {
                    if (c.closed.isDone()) {
                        NettyClient.CloseInfo i = c.closed.getNow(null);
                        r.close = new Close(i.code(), i.reason());
                        return;
                    }
                    if (stopping) {
                        return;
                    }
                    continue;
                }
                long n = text ? Long.parseLong(m.string().replaceAll("\\D", ""))
                        : ByteBuffer.wrap(m.data()).getLong();
                r.got(n, System.nanoTime());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits (at most {@code timeout}) until the lossless publisher has written the fault point's messages. */
    void awaitFaultPoint(Duration timeout) throws InterruptedException {
        if (!atFault.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("the publisher did not write " + faultAfter + " messages within " + timeout
                    + " (wrote " + losslessSent + ")");
        }
    }

    /**
     * Waits (at most {@code timeout}) until the lossless transfer is over for both its receivers (all
     * of it arrived, or their connection ended), lets the live streams run {@code liveAfter} longer,
     * then stops them.
     */
    void awaitEnd(Duration timeout, Duration liveAfter) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (Thread t : threads) {
            if (t.getName().startsWith("lossless-") && !t.getName().equals("lossless-publisher-reader")) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                if (t.isAlive()) {
                    throw new AssertionError(t.getName() + " still running after " + timeout + "; " + this);
                }
            }
        }
        Thread.sleep(liveAfter.toMillis());
        sendersStopping = true;
        join("live-senders");
        Thread.sleep(1000); // what is on its way arrives
        stopping = true;
        join("video-subscriber");
        join("data-subscriber");
    }

    private void join(String name) throws InterruptedException {
        for (Thread t : threads) {
            if (t.getName().equals(name)) {
                t.join(5000);
                if (t.isAlive()) {
                    throw new AssertionError(name + " still running 5 s after it was told to stop");
                }
            }
        }
    }

    /** Whether the lossless subscriber on S got every message, each byte as sent, in order, the same SHA-256. */
    boolean losslessComplete() {
        return lossless.arrived == MESSAGES && lossless.corrupt == 0 && lossless.holes == 0 && lossless.disorder == 0
                && Arrays.equals(digestOf(lossless.digest), digestOf(sentDigest));
    }

    /** What {@code d} has taken so far, leaving it as it is. */
    private static byte[] digestOf(MessageDigest d) {
        try {
            return ((MessageDigest) d.clone()).digest();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }

    /** A few lines saying what each stream did since {@code faultNanos}. */
    String report(long faultNanos) {
        StringBuilder b = new StringBuilder();
        b.append(String.format("  lossless: %d of %d written; on S %d arrived (%d after holes, %d out of order, %d corrupt), "
                        + "sha256 %s, flowed again after %d ms; on P %d arrived (%d after holes, %d out of order, %d corrupt)%n",
                losslessSent, MESSAGES, lossless.arrived, lossless.holes, lossless.disorder, lossless.corrupt,
                losslessComplete() ? "equal " + HexFormat.of().formatHex(digestOf(sentDigest), 0, 6) + "..." : "n/a (incomplete)",
                lossless.longestStallMillis(faultNanos), losslessLocal.arrived, losslessLocal.holes,
                losslessLocal.disorder, losslessLocal.corrupt));
        b.append(String.format("  lossless told: subscriber on S %s; subscriber on P %s; publisher %s%n",
                lossless.close == null ? "not closed" : lossless.close.since(faultNanos),
                losslessLocal.close == null ? "not closed" : losslessLocal.close.since(faultNanos),
                publisherClose == null ? "not closed" : publisherClose.since(faultNanos)));
        for (Receiver r : List.of(video, data)) {
            long sent = r == video ? videoSent : dataSent;
            b.append(String.format("  %s: %d sent, %d arrived, %d missing (%d after holes), %d out of order, "
                            + "flowed again after %d ms; closed: %s%n", r.name, sent, r.arrived, sent - r.arrived,
                    r.holes, r.disorder, r.longestStallMillis(faultNanos), r.close == null ? "no" : r.close.since(faultNanos)));
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return "lossless written " + losslessSent + ", arrived on S " + lossless.arrived + " (close " + lossless.close
                + "), on P " + losslessLocal.arrived + " (close " + losslessLocal.close + "), publisher " + publisherClose;
    }

    @Override
    public void close() {
        stopping = true;
        for (AutoCloseable c : new AutoCloseable[] {videoPub, videoSub, dataPub, dataSub, pub, sub, localSub}) {
            try {
                c.close();
            } catch (Exception e) {
                // already gone with its node
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}

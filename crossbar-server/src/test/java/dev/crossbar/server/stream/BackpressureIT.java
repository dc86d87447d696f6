package dev.crossbar.server.stream;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.schema.OneToMany;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.server.testing.RawClient;
import dev.crossbar.server.testing.RelayServerExtension;
import io.netty.util.internal.PlatformDependent;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code slow=backpressure}: a slow subscriber slows the publisher instead of losing messages; every
 * subscriber gets every byte, in order, message for message; the relay's memory stays near its
 * bounds; a subscriber that stops reading altogether is closed after the timeout and the others
 * finish.
 */
class BackpressureIT {

    private static final int MESSAGE = 1024 * 1024;
    private static final long TOTAL = Long.getLong("crossbar.backpressure.bytes", 1L << 30);
    /** The throttled subscriber's pace, bytes per second. */
    private static final double SLOW_RATE = 48e6;
    /**
     * What Netty's direct memory (the relay's and the in-process clients' buffers) may reach: about
     * 1 MiB per receiver and a message or two per sender, plus the allocator's chunks; a relay that
     * queued instead of holding the publisher back would need most of the gigabyte.
     */
    private static final long MEMORY_BOUND = 96L * 1024 * 1024;
    private static final Duration WAIT = Duration.ofSeconds(10);

    @RegisterExtension
    final RelayServerExtension relay = new RelayServerExtension(b -> b
            .backpressureTimeout(Duration.ofSeconds(3))
            .routing(new RoutingTable(RoutingTable.parseAll(List.of("/files/**:slow=backpressure")))));

    /** Message {@code i}: 1 MiB of a fixed random block, its index in the first 8 bytes. */
    private static byte[] message(byte[] block, long i) {
        byte[] m = block.clone();
        for (int b = 0; b < 8; b++) {
            m[b] = (byte) (i >>> (8 * b));
        }
        return m;
    }

    private static byte[] block() {
        byte[] block = new byte[MESSAGE];
        new SplittableRandom(16).nextBytes(block);
        return block;
    }

    private int members(String name) {
        Topic t = relay.server().topics().get(new TopicKey(OneToMany.INSTANCE, name));
        return t == null ? 0 : t.size();
    }

    @Test
    @Timeout(value = 5, unit = java.util.concurrent.TimeUnit.MINUTES)
    void aSlowSubscriberSlowsThePublisherAndNobodyLosesAByte() throws Exception {
        byte[] block = block();
        long messages = TOTAL / MESSAGE;
        try (RawClient pub = new RawClient(relay.port());
             RawClient fast = new RawClient(relay.port());
             RawClient slow = new RawClient(relay.port(), 64 * 1024)) {
            assertTrue(fast.upgrade("/out/files/a").startsWith("HTTP/1.1 101"));
            assertTrue(slow.upgrade("/out/files/a").startsWith("HTTP/1.1 101"));
            assertTrue(pub.upgrade("/in/files/a").startsWith("HTTP/1.1 101"));
            await("all joined", WAIT, () -> members("files/a") == 3);

            AtomicReference<Throwable> failed = new AtomicReference<>();
            AtomicLong peakMemory = new AtomicLong();
            long rssBefore = rssBytes();
            // The test JVM's heap may grow meanwhile (its clients, earlier tests' garbage): that is
            // not the relay's buffers, so it is taken off the RSS growth below.
            long heapBefore = java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted();
            AtomicLong peakRss = new AtomicLong(rssBefore);
            MessageDigest sent = MessageDigest.getInstance("SHA-256");
            long[] publishNanos = new long[1];
            Thread publisher = new Thread(() -> {
                try {
                    long start = System.nanoTime();
                    for (long i = 0; i < messages; i++) {
                        byte[] m = message(block, i);
                        sent.update(m);
                        pub.send(RawClient.frame(0x82, m, true));
                    }
                    publishNanos[0] = System.nanoTime() - start;
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                }
            }, "publisher");
            PacedReader fastReader = new PacedReader(fast, messages, MESSAGE, 0, failed);
            PacedReader slowReader = new PacedReader(slow, messages, MESSAGE, SLOW_RATE, failed);
            Thread sampler = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    peakMemory.accumulateAndGet(PlatformDependent.usedDirectMemory(), Math::max);
                    peakRss.accumulateAndGet(rssBytes(), Math::max);
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "memory-sampler");
            sampler.setDaemon(true);
            sampler.start();
            publisher.start();
            fastReader.start();
            slowReader.start();
            publisher.join(240_000);
            fastReader.join(60_000);
            slowReader.join(60_000);
            sampler.interrupt();
            if (failed.get() != null) {
                throw new AssertionError("a client failed", failed.get());
            }

            byte[] expected = sent.digest();
            assertEquals(messages, fastReader.messages, "fast subscriber: every message");
            assertEquals(messages, slowReader.messages, "slow subscriber: every message");
            assertArrayEquals(expected, fastReader.digest.digest(), "fast subscriber: every byte, in order");
            assertArrayEquals(expected, slowReader.digest.digest(), "slow subscriber: every byte, in order");
            // The publisher went at the slow subscriber's pace: it could not be done much sooner.
            double slowest = (TOTAL - MEMORY_BOUND) / SLOW_RATE;
            System.out.printf("backpressure: %d MiB to a fast and a %.0f MB/s subscriber, publisher took %.1f s, "
                    + "relay direct memory peak %d MiB, process RSS %d -> peak %d MiB%n", TOTAL >> 20, SLOW_RATE / 1e6,
                    publishNanos[0] / 1e9, peakMemory.get() >> 20, rssBefore >> 20, peakRss.get() >> 20);
            assertTrue(publishNanos[0] / 1e9 >= slowest * 0.9,
                    "publisher paced by the slow subscriber: " + publishNanos[0] / 1e9 + " s, expected >= " + slowest);
            assertTrue(peakMemory.get() > 0, "Netty counts its direct memory (the tests cap it)");
            assertTrue(peakMemory.get() < MEMORY_BOUND, "relay memory bounded: peak " + (peakMemory.get() >> 20) + " MiB");
            // The whole process (relay, clients, JVM): it grew by far less than what went through.
            long heapGrowth = Math.max(0,
                    java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted() - heapBefore);
            assertTrue(peakRss.get() - rssBefore - heapGrowth < 2 * MEMORY_BOUND,
                    "RSS grew by " + ((peakRss.get() - rssBefore) >> 20) + " MiB (the heap by " + (heapGrowth >> 20)
                            + ") for " + (TOTAL >> 20) + " MiB relayed");
            Topic t = relay.server().topics().get(new TopicKey(OneToMany.INSTANCE, "files/a"));
            assertNotNull(t);
            assertTrue(t.holdBack().heldNanos(System.nanoTime()) > 0, "the stats say the senders were held back");
            assertEquals(0, t.totals()[4], "nothing dropped");
        }
    }

    @Test
    @Timeout(value = 2, unit = java.util.concurrent.TimeUnit.MINUTES)
    void aSubscriberThatStopsReadingIsClosedAfterTheTimeoutAndTheOthersFinish() throws Exception {
        byte[] block = block();
        long messages = 64;
        try (RawClient pub = new RawClient(relay.port());
             RawClient fast = new RawClient(relay.port());
             RawClient stalled = new RawClient(relay.port(), 16 * 1024)) {
            assertTrue(fast.upgrade("/out/files/b").startsWith("HTTP/1.1 101"));
            assertTrue(stalled.upgrade("/out/files/b").startsWith("HTTP/1.1 101"));
            assertTrue(pub.upgrade("/in/files/b").startsWith("HTTP/1.1 101"));
            await("all joined", WAIT, () -> members("files/b") == 3);
            AtomicReference<Throwable> failed = new AtomicReference<>();
            MessageDigest sent = MessageDigest.getInstance("SHA-256");
            Thread publisher = new Thread(() -> {
                try {
                    for (long i = 0; i < messages; i++) {
                        byte[] m = message(block, i);
                        sent.update(m);
                        pub.send(RawClient.frame(0x82, m, true));
                    }
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                }
            }, "publisher");
            PacedReader fastReader = new PacedReader(fast, messages, MESSAGE, 0, failed);
            long start = System.nanoTime();
            publisher.start();
            fastReader.start();
            // Held back, then released when the stalled one is closed (3 s without reading).
            publisher.join(60_000);
            fastReader.join(60_000);
            double took = (System.nanoTime() - start) / 1e9;
            if (failed.get() != null) {
                throw new AssertionError("a client failed", failed.get());
            }
            assertEquals(messages, fastReader.messages);
            assertArrayEquals(sent.digest(), fastReader.digest.digest(), "the others lose nothing");
            assertTrue(took >= 2.5, "the stalled subscriber held the stream for its timeout first: " + took + " s");
            RawClient.Frame close = stalled.readUntilClose(20_000);
            assertNotNull(close, "the stalled subscriber is closed");
            assertEquals(1013, close.closeCode());
            assertTrue(close.closeReason().startsWith("stalled: read nothing for 3s"), close.closeReason());
        }
    }

    @Test
    @Timeout(value = 2, unit = java.util.concurrent.TimeUnit.MINUTES)
    void manyToManyEveryMemberIsASenderAndASlowOneHoldsTheOthersBackWithoutLoss() throws Exception {
        byte[] block = block();
        long messages = 48;
        try (RawClient a = new RawClient(relay.port());
             RawClient b = new RawClient(relay.port());
             RawClient slow = new RawClient(relay.port(), 64 * 1024)) {
            for (RawClient c : new RawClient[] {a, b, slow}) {
                assertTrue(c.upgrade("/files/room").startsWith("HTTP/1.1 101"));
            }
            await("all joined", WAIT, () -> relay.server().topics().size() == 1
                    && relay.server().topics().topics().iterator().next().size() == 3);
            AtomicReference<Throwable> failed = new AtomicReference<>();
            MessageDigest sent = MessageDigest.getInstance("SHA-256");
            Thread sender = new Thread(() -> {
                try {
                    for (long i = 0; i < messages; i++) {
                        byte[] m = message(block, i);
                        sent.update(m);
                        a.send(RawClient.frame(0x82, m, true));
                    }
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                }
            }, "member-a");
            PacedReader atB = new PacedReader(b, messages, MESSAGE, 0, failed);
            PacedReader atSlow = new PacedReader(slow, messages, MESSAGE, 16e6, failed);
            sender.start();
            atB.start();
            atSlow.start();
            sender.join(60_000);
            atB.join(60_000);
            atSlow.join(60_000);
            if (failed.get() != null) {
                throw new AssertionError("a member failed", failed.get());
            }
            byte[] expected = sent.digest();
            assertArrayEquals(expected, atB.digest.digest(), "b got every byte of a's, in order");
            assertArrayEquals(expected, atSlow.digest.digest(), "the slow member too");
            assertTrue(relay.server().topics().topics().iterator().next().holdBack().heldNanos(System.nanoTime()) > 0,
                    "the slow member held the others back");
        }
    }

    /** This process's resident set size, from /proc (Linux). */
    private static long rssBytes() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        throw new AssertionError("no VmRSS in /proc/self/status");
    }
}

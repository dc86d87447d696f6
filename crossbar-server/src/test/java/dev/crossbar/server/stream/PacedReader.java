package dev.crossbar.server.stream;

import dev.crossbar.server.testing.RawClient;
import java.security.MessageDigest;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A subscriber on its own thread: reads whole messages, checks each is one final binary frame of
 * the expected size (never merged, split or re-typed), hashes them in order, answers the relay's
 * pings, and reads no faster than {@code bytesPerSecond} (0: as fast as it can).
 */
final class PacedReader extends Thread {

    final MessageDigest digest;
    volatile long messages;

    private final RawClient client;
    private final long expected;
    private final int messageSize;
    private final double bytesPerSecond;
    private final AtomicReference<Throwable> failed;

    PacedReader(RawClient client, long expected, int messageSize, double bytesPerSecond,
                AtomicReference<Throwable> failed) throws Exception {
        super("paced-reader");
        setDaemon(true);
        this.client = client;
        this.expected = expected;
        this.messageSize = messageSize;
        this.bytesPerSecond = bytesPerSecond;
        this.failed = failed;
        this.digest = MessageDigest.getInstance("SHA-256");
    }

    @Override
    public void run() {
        try {
            long start = System.nanoTime();
            while (messages < expected) {
                RawClient.Frame f = client.readFrame(30_000);
                if (f == null) {
                    throw new AssertionError("no message " + messages + " within 30 s");
                }
                if (f.opcode() == 0x9) {
                    client.send(RawClient.frame(0x8A, f.payload(), true)); // the relay's keepalive: pong
                    continue;
                }
                if (f.opcode() == 0x8) {
                    throw new AssertionError("message " + messages + ": the relay closed with " + f.closeCode() + " "
                            + f.closeReason());
                }
                if (f.opcode() != 0x2 || !f.fin() || f.payload().length != messageSize) {
                    throw new AssertionError("message " + messages + ": opcode " + f.opcode() + ", fin " + f.fin()
                            + ", " + f.payload().length + " bytes: merged, split or re-typed");
                }
                digest.update(f.payload());
                messages++;
                if (bytesPerSecond > 0) {
                    long wait = start + (long) ((double) messages * messageSize / bytesPerSecond * 1e9) - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    }
                }
            }
        } catch (Throwable e) {
            failed.compareAndSet(null, e);
        }
    }
}

package dev.crossbar.bench.soak;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One lossless file: {@code messages} binary messages of 1 MiB written flat out to
 * {@code /in/files/f<n>} ({@code slow=backpressure}) on one node, read by a subscriber on the same
 * node and one on the other, each checking every message's bytes, their order, and the whole by
 * SHA-256. Each receiver ends one way: complete, told (a close frame: 4010 says what was lost),
 * broken (its own node died), cut (the publisher's connection broke and the receiver has every
 * message it wrote), or silent: anything else, the defect the soak looks for.
 */
final class FileTransfer implements Runnable {

    /** How long a receiver may wait for the rest, or for being told: past the lossless timeout (60 s). */
    static final long RECEIVE_DEADLINE_SECONDS = 180;

    private final Soak.Cluster cluster;
    private final int n;
    private final int messages;
    private final byte[] block;
    private volatile long written;
    private volatile Ws.Ending publisherEnding;
    private final MessageDigest sent = Receiver.sha256();

    FileTransfer(Soak.Cluster cluster, int n, int messages, byte[] block) {
        this.cluster = cluster;
        this.n = n;
        this.messages = messages;
        this.block = block;
    }

    private byte[] message(int i) {
        byte[] m = block.clone();
        ByteBuffer.wrap(m).putInt(n).putInt(i);
        return m;
    }

    /** One subscriber of the file. */
    private final class Receiver implements Ws.Sink {
        final String name;
        final MessageDigest digest = sha256();
        final CompletableFuture<Void> done = new CompletableFuture<>();
        long arrived;
        /** Messages whose bytes were not those written under their number. */
        long corrupt;
        /** Messages whose number was not the one after the last (a hole, or out of order). */
        long outOfTurn;
        long last = -1;

        Receiver(String name) {
            this.name = name;
        }

        @Override
        public synchronized void message(byte[] m, boolean text) {
            ByteBuffer b = ByteBuffer.wrap(m);
            int file = m.length >= 8 ? b.getInt() : -1;
            int index = m.length >= 8 ? b.getInt() : -1;
            if (text || m.length != block.length || file != n || !Arrays.equals(m, 8, m.length, block, 8, block.length)) {
                corrupt++;
            } else if (index != last + 1) {
                outOfTurn++;
            }
            last = index;
            digest.update(m);
            arrived++;
            cluster.ledger().fileMessages.incrementAndGet();
            if (arrived == messages) {
                done.complete(null);
            }
        }

        static MessageDigest sha256() {
            try {
                return MessageDigest.getInstance("SHA-256");
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new AssertionError(e);
            }
        }
    }

    @Override
    public void run() {
        int home = n % 2;
        Receiver local = new Receiver("node " + home);
        Receiver remote = new Receiver("node " + (1 - home));
        Ws l;
        Ws r;
        try {
            l = Ws.connect(cluster.http(), cluster.node(home).ws("/out/files/f" + n), local);
            r = Ws.connect(cluster.http(), cluster.node(1 - home).ws("/out/files/f" + n), remote);
        } catch (Exception e) {
            cluster.log("file " + n + ": not started, a subscriber could not connect (" + e + ")");
            return;
        }
        try {
            Thread.sleep(1000); // the other node hears of its subscriber
            Ws p = publish(home);
            String a = outcome(local, l);
            String b = outcome(remote, r);
            if (!a.equals("complete") || !b.equals("complete")) {
                cluster.log("file " + n + " (" + written + " of " + messages + " written, publisher "
                        + (publisherEnding == null ? "done" : publisherEnding) + "): on " + local.name + " " + a
                        + "; on " + remote.name + " " + b);
            }
            if (p != null) {
                p.abort();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            l.abort();
            r.abort();
        }
    }

    /** Writes the file; returns the publisher's connection (left open until its receivers are judged), or null. */
    private Ws publish(int home) {
        Ws p;
        try {
            p = Ws.connect(cluster.http(), cluster.node(home).ws("/in/files/f" + n), (m, t) -> { });
        } catch (Exception e) {
            publisherEnding = new Ws.Ending(-1, "could not connect: " + e);
            return null;
        }
        try {
            for (int i = 0; i < messages; i++) {
                byte[] m = message(i);
                p.sendBinary(m);
                sent.update(m);
                written = i + 1;
            }
        } catch (Exception e) {
            publisherEnding = p.ended.getNow(new Ws.Ending(-1, String.valueOf(e)));
        }
        p.ended.thenAccept(e -> {
            if (publisherEnding == null && !e.reason().equals("aborted by the client")) {
                publisherEnding = e;
            }
        });
        return p;
    }

    private String outcome(Receiver rx, Ws ws) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(RECEIVE_DEADLINE_SECONDS);
        while (!rx.done.isDone() && !ws.ended.isDone() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        Ledger ledger = cluster.ledger();
        synchronized (rx) {
            boolean whole = rx.arrived == messages && rx.corrupt == 0 && rx.outOfTurn == 0
                    && Arrays.equals(((MessageDigest) clone(rx.digest)).digest(), ((MessageDigest) clone(sent)).digest());
            if (whole) {
                ledger.filesComplete.incrementAndGet();
                return "complete";
            }
            String got = rx.arrived + " of " + messages + (rx.outOfTurn > 0 ? ", " + rx.outOfTurn + " after a hole" : "");
            Ws.Ending end = ws.ended.getNow(null);
            if (rx.corrupt > 0) {
                ledger.filesSilent.incrementAndGet();
                return "SILENT: " + rx.corrupt + " messages not as written, " + got + (end == null ? "" : ", then " + end);
            }
            if (end != null && end.closeFrame()) {
                ledger.filesTold.incrementAndGet();
                return "told " + end + " with " + got;
            }
            if (end != null) {
                ledger.filesBroken.incrementAndGet();
                return "broken " + end + " with " + got;
            }
            if (publisherEnding != null && rx.arrived == written && rx.outOfTurn == 0) {
                ledger.filesCut.incrementAndGet();
                return "cut: every message written arrived, the publisher's connection ended (" + publisherEnding + ")";
            }
            ledger.filesSilent.incrementAndGet();
            return "SILENT: " + got + ", told nothing within " + RECEIVE_DEADLINE_SECONDS + " s";
        }
    }

    private static Object clone(MessageDigest d) {
        try {
            return d.clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }
}

package dev.crossbar.bench.load;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.List;

/**
 * One stream or topic of a run: where its clients connect and how many there are; once
 * connected, their handlers and senders. A 1:N stream has one publisher on {@code /in/<t>} and
 * its receivers (reading ones, and stalled ones that never read) on {@code /out/<t>}; an N:N topic
 * has clients on one path that all send and each hear the others.
 *
 * <p>The lists are filled by the run's main thread before any message is sent and read by it
 * after the loops stop; the loops only read {@link #minHighestSeq()} and call {@link #wake()}.
 */
final class Group {

    private final Part part;
    private final String publishPath;
    private final String receivePath;
    private final int receiverCount;
    private final int stalledCount;
    /** Send times of a tiny-message publisher, whose messages cannot carry them; else null. */
    private final SendTimes sendTimes;

    /** Receivers that read and check every message; in an N:N topic, client i is receiver i. */
    final List<BenchHandler> receivers = new ArrayList<>();
    /** Receivers that stop reading once connected. */
    final List<BenchHandler> stalled = new ArrayList<>();
    /** Publisher (1:N) or each client in order (N:N). */
    final List<Sender> senders = new ArrayList<>();
    /** A 1:N window's publisher, woken by its receivers' progress. */
    private volatile Sender publisher;

    /**
     * @param receivers 1:N: reading receivers; N:N: clients
     * @param stalled   1:N only: receivers that never read
     */
    Group(Part part, String publishPath, String receivePath, int receivers, int stalled) {
        this.part = requireNonNull(part, "part");
        this.publishPath = requireNonNull(publishPath, "publishPath");
        this.receivePath = requireNonNull(receivePath, "receivePath");
        this.receiverCount = receivers;
        this.stalledCount = stalled;
        this.sendTimes = part.format().isTiny() ? new SendTimes() : null;
        if (part.manyToMany() && (stalled != 0 || !publishPath.equals(receivePath))) {
            throw new IllegalArgumentException("an N:N topic has one path and no stalled readers: " + publishPath);
        }
    }

    Part part() {
        return part;
    }

    /** Where the publisher connects (1:N) or every client (N:N). */
    String publishPath() {
        return publishPath;
    }

    /** Where receivers connect (1:N); the topic's path (N:N). */
    String receivePath() {
        return receivePath;
    }

    int receiverCount() {
        return receiverCount;
    }

    int stalledCount() {
        return stalledCount;
    }

    /** Senders each receiver hears from: the publisher, or every client of the topic (its own included, never heard). */
    int sendersHeard() {
        return part.manyToMany() ? receiverCount : 1;
    }

    SendTimes sendTimes() {
        return sendTimes;
    }

    void publisher(Sender s) {
        publisher = s;
    }

    /** A receiver made progress: the publisher may have room in its window. Any thread. */
    void wake() {
        Sender p = publisher;
        if (p != null) {
            p.wake();
        }
    }

    /** Highest sequence every reading receiver has seen: a 1:N window's lower edge. Any thread. */
    long minHighestSeq() {
        long min = Long.MAX_VALUE;
        for (BenchHandler h : receivers) {
            min = Math.min(min, h.checker().highestSeq(0));
        }
        return min;
    }

    /** Messages written by this group's senders so far. */
    long sent() {
        long sum = 0;
        for (Sender s : senders) {
            sum += s.sent();
        }
        return sum;
    }

    /** Deliveries due: each message to every reading receiver, or (N:N) to every client but its sender. */
    long expected() {
        return part.manyToMany() ? sent() * (receiverCount - 1) : sent() * receiverCount;
    }

    /** Distinct messages its receivers got from the senders they should hear; after the loops stop. */
    long unique() {
        long sum = 0;
        for (int i = 0; i < receivers.size(); i++) {
            IntegrityChecker c = receivers.get(i).checker();
            for (int s = 0; s < c.senders(); s++) {
                if (!part.manyToMany() || s != i) {
                    sum += c.unique(s);
                }
            }
        }
        return sum;
    }

    /** Payload bytes its receivers got; any thread. */
    long deliveredBytes() {
        long sum = 0;
        for (BenchHandler h : receivers) {
            sum += h.checker().deliveredBytes();
        }
        return sum;
    }
}

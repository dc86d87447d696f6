package dev.crossbar.bench.load;

import static java.util.Objects.requireNonNull;

import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A share of a run reported on its own: mixed's video, data and file transfer; the whole run
 * otherwise. Its groups share one message shape (format, rate, window, 1:N or N:N), and it keeps
 * its latencies per load-generator event loop ({@link LatencyRecorder}).
 */
final class Part {

    private final String name;
    private final MessageFormat format;
    private final double rate;
    private final int window;
    private final boolean manyToMany;
    private final List<Group> groups = new ArrayList<>();
    private final Map<EventExecutor, LatencyRecorder> recorders = new ConcurrentHashMap<>();

    Part(String name, MessageFormat format, double rate, int window, boolean manyToMany) {
        this.name = requireNonNull(name, "name");
        this.format = requireNonNull(format, "format");
        this.rate = rate;
        this.window = window;
        this.manyToMany = manyToMany;
    }

    String name() {
        return name;
    }

    MessageFormat format() {
        return format;
    }

    /** Messages per second per sender; 0 is as fast as the window allows. */
    double rate() {
        return rate;
    }

    /** Most messages in flight per 1:N publisher; 0 is none. */
    int window() {
        return window;
    }

    boolean manyToMany() {
        return manyToMany;
    }

    List<Group> groups() {
        return Collections.unmodifiableList(groups);
    }

    /** Adds a group; while the plan is built only. */
    Group add(String publishPath, String receivePath, int receivers, int stalled) {
        Group g = new Group(this, publishPath, receivePath, receivers, stalled);
        groups.add(g);
        return g;
    }

    /** The recorder of {@code loop}, made on first use (by the loop's first receiver of this part). */
    LatencyRecorder recorder(EventExecutor loop, RunClock clock, long spanNanos) {
        return recorders.computeIfAbsent(loop, l -> new LatencyRecorder(clock, spanNanos));
    }

    Collection<LatencyRecorder> recorders() {
        return recorders.values();
    }

    /** Senders of the part, in the order they connect. */
    List<Sender> senders() {
        List<Sender> all = new ArrayList<>();
        for (Group g : groups) {
            all.addAll(g.senders);
        }
        return all;
    }

    /** Payload bytes its receivers got, over message size: messages (merged parts included); any thread. */
    long deliveredMessages() {
        long bytes = 0;
        for (Group g : groups) {
            bytes += g.deliveredBytes();
        }
        return bytes / format.size();
    }
}

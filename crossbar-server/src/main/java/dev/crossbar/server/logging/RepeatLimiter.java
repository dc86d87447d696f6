package dev.crossbar.server.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import dev.crossbar.server.audit.Audit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

/**
 * Keeps a flood of one line from drowning the log: each logger and message template may be
 * logged {@link #PER_WINDOW} times per {@link #WINDOW_NANOS}; further repeats in that window are
 * held back and counted, and one line then says how many were ({@link #report}, called each window).
 * A client that trips the same warning a thousand times a second costs the log one line a second
 * or so, and nobody loses the fact that it happened. At most {@link #MAX_KEYS} templates are tracked.
 */
public final class RepeatLimiter extends TurboFilter {

    /** Lines of one template let through per window. */
    static final int PER_WINDOW = 5;
    static final long WINDOW_NANOS = 10_000_000_000L;
    static final int MAX_KEYS = 1024;
    /** The logger that reports what was held back; never limited itself. */
    static final String REPORTER = "dev.crossbar.server.logging.Repeats";

    private static final class Count {
        long windowStart;
        int inWindow;
        long heldBack;
    }

    private final Map<String, Count> counts = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Count> eldest) {
            return size() > MAX_KEYS;
        }
    };

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
        // The audit trail is never thinned: every event in it is one the operator asked to keep.
        if (format == null || logger.getName().equals(REPORTER) || logger.getName().equals(Audit.LOGGER)
                || !logger.isEnabledFor(level)) {
            return FilterReply.NEUTRAL;
        }
        long now = System.nanoTime();
        synchronized (counts) {
            Count c = counts.computeIfAbsent(logger.getName() + '\u0000' + format, k -> new Count());
            if (now - c.windowStart >= WINDOW_NANOS) {
                c.windowStart = now;
                c.inWindow = 0;
            }
            if (++c.inWindow <= PER_WINDOW) {
                return FilterReply.NEUTRAL;
            }
            c.heldBack++;
            return FilterReply.DENY;
        }
    }

    /** Logs one line per template that had repeats held back since the last report, and resets them. */
    public void report() {
        reportTo(LoggerFactory.getLogger(REPORTER));
    }

    /** As {@link #report}, to {@code reporter}. */
    void reportTo(org.slf4j.Logger reporter) {
        List<String> lines = new ArrayList<>();
        synchronized (counts) {
            for (Map.Entry<String, Count> e : counts.entrySet()) {
                if (e.getValue().heldBack > 0) {
                    String[] key = e.getKey().split("\u0000", 2);
                    lines.add(e.getValue().heldBack + " more like \"" + key[1] + "\" from "
                            + key[0].substring(key[0].lastIndexOf('.') + 1));
                    e.getValue().heldBack = 0;
                }
            }
        }
        for (String line : lines) {
            reporter.warn("held back {}", line);
        }
    }
}

package dev.crossbar.core.route;

import dev.crossbar.core.units.Units;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a stream needs beyond its schema, as a routing rule gives it: where a newcomer starts and how
 * far behind live a receiver may fall. Resolved once, when a topic is created; never per message.
 *
 * @param start      what a member that joins gets before the live messages
 * @param maxLatency a receiver whose oldest queued message is older than this is skipped forward;
 *                   {@link Duration#ZERO} for no bound (the default: drop only over the queue bound)
 * @param slow       what a receiver that cannot keep up costs: its own messages, or its senders' pace
 * @param session    {@code schema=session}: the stream is not relayed 1:N; each client ({@code /out/})
 *                   gets its own private 1:1 session with one host ({@code /in/})
 * @param limits     what one connection may send ({@code rate}, {@code burst}, {@code bandwidth},
 *                   {@code over-limit}); the keys the rule leaves out come from the relay's defaults
 */
public record StreamOptions(Start start, Duration maxLatency, Slow slow, boolean session, SendLimits limits) {

    /** Today's behaviour, for streams no rule matches. */
    public static final StreamOptions DEFAULT = new StreamOptions(Start.LIVE, Duration.ZERO, Slow.DROP, false);

    /** The value of the {@code schema} key that makes a stream a 1:1 session stream. */
    public static final String SESSION = "session";

    /** What a receiver that cannot keep up costs. */
    public enum Slow {
        /** Its own messages, dropped whole over its bound; nobody else notices. */
        DROP,
        /** The stream's senders, which the relay stops reading until it is back under its bound. */
        BACKPRESSURE;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** A relayed stream (not {@code schema=session}). */
    public StreamOptions(Start start, Duration maxLatency, Slow slow) {
        this(start, maxLatency, slow, false);
    }

    /** Without send limits of its own: the relay's defaults apply. */
    public StreamOptions(Start start, Duration maxLatency, Slow slow, boolean session) {
        this(start, maxLatency, slow, session, SendLimits.UNSET);
    }

    /** Where a newcomer starts. */
    public enum Start {
        /** With the next live message. */
        LIVE,
        /** With the last random-access point (keyframe) of each publisher's MPEG-TS stream. */
        KEYFRAME,
        /** With the last message of each publisher. */
        LAST;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public StreamOptions {
        if (start == null || maxLatency == null || slow == null || limits == null) {
            throw new IllegalArgumentException("start, maxLatency, slow and limits are required");
        }
        if (slow == Slow.BACKPRESSURE && !maxLatency.isZero()) {
            throw new IllegalArgumentException("slow=backpressure and max-latency exclude each other "
                    + "(one waits for the slowest receiver, the other skips it forward)");
        }
        if (maxLatency.isNegative()) {
            throw new IllegalArgumentException("max-latency: " + maxLatency + " (expected: >= 0)");
        }
        if (session && !limits.isUnset()) {
            throw new IllegalArgumentException("schema=session takes no rate, burst, bandwidth or over-limit "
                    + "(a session is held back, never dropped: a sender goes at its reader's pace)");
        }
        if (session && (start != Start.LIVE || !maxLatency.isZero() || slow != Slow.DROP)) {
            throw new IllegalArgumentException("schema=session takes no start, max-latency or slow "
                    + "(a session is a private byte stream: nothing is replayed or skipped, and it is always held back)");
        }
    }

    /** A relayed stream that drops for a slow receiver (not {@code schema=session}). */
    public StreamOptions(Start start, Duration maxLatency) {
        this(start, maxLatency, Slow.DROP, false);
    }

    /** Whether the topic keeps messages for newcomers. */
    public boolean remembers() {
        return start != Start.LIVE;
    }

    public boolean boundsLatency() {
        return !maxLatency.isZero();
    }

    /**
     * Parses {@code KEY=VALUE[,KEY=VALUE...]}: {@code start=live|keyframe|last},
     * {@code max-latency=DURATION} ({@code 500ms}, {@code 2s}), {@code slow=drop|backpressure},
     * {@code schema=session}, and a sender's limits: {@code rate=50/s}, {@code burst=200},
     * {@code bandwidth=2Mbit} (each also {@code off}), {@code over-limit=drop|close}.
     *
     * @throws IllegalArgumentException naming the key or value that is wrong
     */
    public static StreamOptions parse(String text) {
        Start start = Start.LIVE;
        Duration maxLatency = Duration.ZERO;
        Slow slow = Slow.DROP;
        boolean session = false;
        SendLimits limits = SendLimits.UNSET;
        List<String> seen = new ArrayList<>();
        for (String pair : text.split(",", -1)) {
            String p = pair.trim();
            int eq = p.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("'" + p + "' is not KEY=VALUE (keys: " + KEYS + ")");
            }
            String key = p.substring(0, eq).trim();
            String value = p.substring(eq + 1).trim();
            if (seen.contains(key)) {
                throw new IllegalArgumentException("'" + key + "' given twice");
            }
            seen.add(key);
            switch (key) {
                case "start":
                    start = parseStart(value);
                    break;
                case "max-latency":
                    maxLatency = Units.parseDuration(value);
                    if (maxLatency.isZero() || maxLatency.isNegative()) {
                        throw new IllegalArgumentException("max-latency=" + value + " (expected: > 0, e.g. 500ms)");
                    }
                    break;
                case "schema":
                    if (!SESSION.equals(value)) {
                        throw new IllegalArgumentException("schema=" + value + " (expected: session)");
                    }
                    session = true;
                    break;
                case "slow":
                    slow = parseSlow(value);
                    break;
                default:
                    SendLimits parsed = SendLimits.parseKey(limits, key, value);
                    if (parsed != null) {
                        limits = parsed;
                        break;
                    }
                    throw new IllegalArgumentException("unknown option '" + key + "' (keys: " + KEYS + ")");
            }
        }
        return new StreamOptions(start, maxLatency, slow, session, limits);
    }

    /** The keys a rule may set, for error messages. */
    static final String KEYS = "start, max-latency, slow, schema, rate, burst, bandwidth, over-limit";

    private static Slow parseSlow(String value) {
        for (Slow s : Slow.values()) {
            if (s.label().equals(value)) {
                return s;
            }
        }
        throw new IllegalArgumentException("slow=" + value + " (expected: drop or backpressure)");
    }

    /** Whether a slow receiver holds the stream's senders back instead of losing messages. */
    public boolean lossless() {
        return slow == Slow.BACKPRESSURE;
    }

    private static Start parseStart(String value) {
        for (Start s : Start.values()) {
            if (s.label().equals(value)) {
                return s;
            }
        }
        throw new IllegalArgumentException("start=" + value + " (expected: live, keyframe or last)");
    }

    /** The rule's own syntax, for /stats, /ws and logs: {@code start=keyframe,max-latency=500ms}. */
    public String describe() {
        String sent = limits.describe();
        if (session) {
            return "schema=" + SESSION + (sent.isEmpty() ? "" : "," + sent);
        }
        StringBuilder b = new StringBuilder("start=").append(start.label());
        if (boundsLatency()) {
            b.append(",max-latency=").append(maxLatency.toMillis()).append("ms");
        }
        if (slow != Slow.DROP) {
            b.append(",slow=").append(slow.label());
        }
        if (!sent.isEmpty()) {
            b.append(',').append(sent);
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return describe();
    }
}

package dev.crossbar.core.route;

import dev.crossbar.core.units.Units;
import java.util.Locale;

/**
 * How much one connection may send on a stream: whole messages per second with a burst, and bits
 * per second, each a token bucket; and what happens to a message over either limit. A rule sets
 * some of these keys ({@code rate=50/s,burst=200,bandwidth=2Mbit,over-limit=close}); each key it
 * leaves out is taken from the relay's defaults ({@link #withDefaults}). Resolved once when a
 * connection joins; the hot path only reads the resolved numbers.
 *
 * @param rate      messages per second; null: not set here; 0: no limit
 * @param burst     messages that may come at once before the rate applies; null: not set (one
 *                  second's worth of the rate); 0: one second's worth
 * @param bandwidth bits per second; null: not set here; 0: no limit
 * @param over      what a message over a limit costs; null: not set here
 */
public record SendLimits(Double rate, Integer burst, Long bandwidth, OverLimit over) {

    /** Nothing set: every key from the defaults. */
    public static final SendLimits UNSET = new SendLimits(null, null, null, null);
    /** No limit at all: what a relay runs with unless told otherwise. */
    public static final SendLimits NONE = new SendLimits(0.0, 0, 0L, OverLimit.DROP);

    /** What a message over its sender's limit costs. */
    public enum OverLimit {
        /** The message, dropped and counted; the connection stays. */
        DROP,
        /** The connection, closed with 1008 and the limit as the reason. */
        CLOSE;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        static OverLimit parse(String value) {
            for (OverLimit o : values()) {
                if (o.label().equals(value)) {
                    return o;
                }
            }
            throw new IllegalArgumentException("over-limit=" + value + " (expected: drop or close)");
        }
    }

    public SendLimits {
        if (rate != null && (rate < 0 || rate.isNaN() || rate.isInfinite())) {
            throw new IllegalArgumentException("rate=" + rate + " (expected: >= 0 messages per second, 0 = no limit)");
        }
        if (burst != null && burst < 0) {
            throw new IllegalArgumentException("burst=" + burst + " (expected: >= 0 messages)");
        }
        if (bandwidth != null && bandwidth < 0) {
            throw new IllegalArgumentException("bandwidth=" + bandwidth + " (expected: >= 0 bits per second, 0 = no limit)");
        }
    }

    /** Each key not set here taken from {@code defaults}. */
    public SendLimits withDefaults(SendLimits defaults) {
        return new SendLimits(rate != null ? rate : defaults.rate, burst != null ? burst : defaults.burst,
                bandwidth != null ? bandwidth : defaults.bandwidth, over != null ? over : defaults.over);
    }

    /** Whether this sets no key (a rule without any limit key). */
    public boolean isUnset() {
        return rate == null && burst == null && bandwidth == null && over == null;
    }

    /** Whether a resolved set limits anything. */
    public boolean limits() {
        return (rate != null && rate > 0) || (bandwidth != null && bandwidth > 0);
    }

    /** Messages that may come at once: the burst given, else one second's worth of the rate (at least one). */
    public double messageBucket() {
        double r = rate == null ? 0 : rate;
        return burst != null && burst > 0 ? burst : Math.max(1, r);
    }

    /**
     * {@code current} with one limit key set: {@code rate}, {@code burst}, {@code bandwidth} or
     * {@code over-limit}, valued as in a stream rule.
     *
     * @throws IllegalArgumentException naming the key for a bad value or an unknown key
     */
    public static SendLimits parse(SendLimits current, String key, String value) {
        SendLimits l = parseKey(current, key, value);
        if (l == null) {
            throw new IllegalArgumentException("unknown limit '" + key + "' (expected: rate, burst, bandwidth or over-limit)");
        }
        return l;
    }

    /**
     * Parses one limit key into {@code current}; null if {@code key} is not a limit key.
     *
     * @throws IllegalArgumentException naming the key for a bad value
     */
    static SendLimits parseKey(SendLimits current, String key, String value) {
        return switch (key) {
            case "rate" -> new SendLimits(value.equals("off") ? 0.0 : positive(key, value, Units.parseRate(value)),
                    current.burst, current.bandwidth, current.over);
            case "burst" -> {
                int b;
                try {
                    b = Integer.parseInt(value);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("burst=" + value + " (expected: a whole number of messages)");
                }
                if (b < 1) {
                    throw new IllegalArgumentException("burst=" + value + " (expected: >= 1)");
                }
                yield new SendLimits(current.rate, b, current.bandwidth, current.over);
            }
            case "bandwidth" -> new SendLimits(current.rate, current.burst,
                    value.equals("off") ? 0L : (long) positive(key, value, Units.parseBitRate(value)), current.over);
            case "over-limit" -> new SendLimits(current.rate, current.burst, current.bandwidth, OverLimit.parse(value));
            default -> null;
        };
    }

    private static double positive(String key, String text, double v) {
        if (v <= 0) {
            throw new IllegalArgumentException(key + "=" + text + " (expected: > 0, or off)");
        }
        return v;
    }

    /** The keys set here, in the rule's syntax: {@code rate=50/s,burst=200,bandwidth=2Mbit}; "" if none. */
    public String describe() {
        StringBuilder b = new StringBuilder();
        if (rate != null) {
            b.append(",rate=").append(rate == 0 ? "off" : Units.formatRate(rate));
        }
        if (burst != null && burst > 0) {
            b.append(",burst=").append(burst);
        }
        if (bandwidth != null) {
            b.append(",bandwidth=").append(bandwidth == 0 ? "off" : Units.formatBitRate(bandwidth));
        }
        if (over != null && (rate != null || bandwidth != null || over != OverLimit.DROP)) {
            b.append(",over-limit=").append(over.label());
        }
        return b.length() == 0 ? "" : b.substring(1);
    }
}

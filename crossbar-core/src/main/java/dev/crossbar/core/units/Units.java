package dev.crossbar.core.units;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses and prints sizes and durations, one grammar for every place the relay reads them.
 *
 * <p>Sizes: a whole number of bytes, optionally with a unit, powers of 1024 whichever way it is
 * spelt: {@code 4096}, {@code 64KiB} (also {@code 64k}, {@code 64KB}), {@code 10MiB}, {@code 1GiB}.
 * Durations: a number with a unit {@code ms}, {@code s}, {@code m} or {@code h} ({@code 500ms},
 * {@code 1.5s}, {@code 5m}); a bare number counts as seconds; ISO-8601 ({@code PT30S}) too.
 * Bit rates: a number of bits per second with a decimal unit, as links are measured: {@code 2Mbit}
 * ({@code 2Mbit/s}, {@code 2mbps}), {@code 500kbit}, {@code 1Gbit}, {@code 64000} (bits). Message
 * rates: a count per second, minute or hour: {@code 50/s}, {@code 600/m}, {@code 50} (per second).
 * Negative values are refused. Errors are {@link IllegalArgumentException}s that name the text and
 * say what was expected.
 */
public final class Units {

    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?");
    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)?");
    private static final Pattern BIT_RATE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(bit|kbit|mbit|gbit|bps|kbps|mbps|gbps)?(?:/s)?");
    private static final Pattern RATE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(?:/\\s*(s|m|h))?");
    private static final long KIB = 1024;
    private static final long MIB = KIB * KIB;
    private static final long GIB = MIB * KIB;

    private Units() {
    }

    /** {@code text} as bytes. */
    public static long parseBytes(String text) {
        Matcher m = SIZE.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' (expected: a size such as 4096, 64KiB or 10MiB)");
        }
        String unit = m.group(2) == null ? "b" : m.group(2);
        long multiplier = switch (unit.charAt(0)) {
            case 'k' -> KIB;
            case 'm' -> MIB;
            case 'g' -> GIB;
            default -> 1;
        };
        try {
            return Math.multiplyExact(Long.parseLong(m.group(1)), multiplier);
        } catch (ArithmeticException | NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' (expected: a size below 8 EiB)", e);
        }
    }

    /** {@code text} as bytes that fit an {@code int}, below 2 GiB. */
    public static int parseIntBytes(String text) {
        long v = parseBytes(text);
        if (v >= Integer.MAX_VALUE) {
            throw new IllegalArgumentException("'" + text + "' (expected: below 2GiB)");
        }
        return (int) v;
    }

    /** {@code text} as a duration. */
    public static Duration parseDuration(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.startsWith("p")) {
            try {
                Duration d = Duration.parse(t.toUpperCase(Locale.ROOT));
                if (!d.isNegative()) {
                    return d;
                }
            } catch (RuntimeException e) {
                // the one error message below
            }
            throw new IllegalArgumentException("'" + text + "' (expected: an ISO-8601 duration such as PT30S)");
        }
        Matcher m = DURATION.matcher(t);
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' (expected: a duration such as 500ms, 30s, 1.5s or 5m)");
        }
        double v = Double.parseDouble(m.group(1));
        double millis = switch (m.group(2) == null ? "s" : m.group(2)) {
            case "ms" -> v;
            case "m" -> v * 60_000;
            case "h" -> v * 3_600_000;
            default -> v * 1000;
        };
        if (millis > Long.MAX_VALUE / 2) {
            throw new IllegalArgumentException("'" + text + "' (expected: a duration below a few million years)");
        }
        return Duration.ofNanos(Math.round(millis * 1_000_000));
    }

    /** {@code text} as bits per second. */
    public static long parseBitRate(String text) {
        Matcher m = BIT_RATE.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' (expected: a bit rate such as 2Mbit, 500kbit or 1Gbit)");
        }
        String unit = m.group(2) == null ? "bit" : m.group(2);
        double multiplier = switch (unit.charAt(0)) {
            case 'k' -> 1e3;
            case 'm' -> 1e6;
            case 'g' -> 1e9;
            default -> 1;
        };
        double bits = Double.parseDouble(m.group(1)) * multiplier;
        if (bits >= Long.MAX_VALUE / 2.0) {
            throw new IllegalArgumentException("'" + text + "' (expected: a bit rate below 4 Ebit/s)");
        }
        return Math.round(bits);
    }

    /** {@code bitsPerSecond} in the largest decimal unit that writes it exactly: {@code 2Mbit}, {@code 500kbit}. */
    public static String formatBitRate(long bitsPerSecond) {
        if (bitsPerSecond != 0 && bitsPerSecond % 1_000_000_000 == 0) {
            return bitsPerSecond / 1_000_000_000 + "Gbit";
        }
        if (bitsPerSecond != 0 && bitsPerSecond % 1_000_000 == 0) {
            return bitsPerSecond / 1_000_000 + "Mbit";
        }
        if (bitsPerSecond != 0 && bitsPerSecond % 1000 == 0) {
            return bitsPerSecond / 1000 + "kbit";
        }
        return bitsPerSecond + "bit";
    }

    /** {@code text} as a count per second: {@code 50/s}, {@code 600/m} (10 per second), {@code 50}. */
    public static double parseRate(String text) {
        Matcher m = RATE.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' (expected: a rate such as 50/s, 600/m or 50)");
        }
        double v = Double.parseDouble(m.group(1));
        return switch (m.group(2) == null ? "s" : m.group(2)) {
            case "m" -> v / 60;
            case "h" -> v / 3600;
            default -> v;
        };
    }

    /** A count per second as {@link #parseRate} reads it: {@code 50/s}, {@code 0.5/s}. */
    public static String formatRate(double perSecond) {
        return (perSecond == Math.rint(perSecond) ? Long.toString((long) perSecond) : Double.toString(perSecond)) + "/s";
    }

    /** {@code bytes} in the largest unit that writes it exactly: {@code 10MiB}, {@code 512KiB}, {@code 4600}. */
    public static String formatBytes(long bytes) {
        if (bytes != 0 && bytes % GIB == 0) {
            return bytes / GIB + "GiB";
        }
        if (bytes != 0 && bytes % MIB == 0) {
            return bytes / MIB + "MiB";
        }
        if (bytes != 0 && bytes % KIB == 0) {
            return bytes / KIB + "KiB";
        }
        return Long.toString(bytes);
    }

    /** {@code d} in the largest unit that writes it exactly: {@code 24h}, {@code 5m}, {@code 30s}, {@code 250ms}. */
    public static String formatDuration(Duration d) {
        long millis = d.toMillis();
        if (d.isZero()) {
            return "0s";
        }
        if (!d.equals(Duration.ofMillis(millis))) {
            return d.toString(); // below a millisecond: ISO-8601, which parses back exactly
        }
        if (millis % 3_600_000 == 0) {
            return millis / 3_600_000 + "h";
        }
        if (millis % 60_000 == 0) {
            return millis / 60_000 + "m";
        }
        if (millis % 1000 == 0) {
            return millis / 1000 + "s";
        }
        return millis + "ms";
    }
}

package dev.crossbar.server.stats;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * The original crossbar's string formats, which were Go's: {@code time.Duration.String()} for
 * "time since last message" and {@code time.Time.String()} for connect times. Kept so dashboards
 * written for the original parse Crossbar's legacy fields unchanged.
 */
final class GoFormat {

    /** What the original showed for a direction with no message yet. */
    static final String NEVER = "Never";

    private static final DateTimeFormatter DATE_TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

    private GoFormat() {
    }

    /** Go's {@code Duration.String()}: {@code 0s}, {@code 850ns}, {@code 1.5µs}, {@code 356.934478ms}, {@code 2m3.5s}, {@code 1h0m0s}. */
    static String duration(long nanos) {
        if (nanos == 0) {
            return "0s";
        }
        if (nanos < 0) {
            return "-" + duration(-nanos);
        }
        if (nanos < 1_000L) {
            return nanos + "ns";
        }
        if (nanos < 1_000_000L) {
            return fraction(nanos, 3) + "µs";
        }
        if (nanos < 1_000_000_000L) {
            return fraction(nanos, 6) + "ms";
        }
        long hours = nanos / 3_600_000_000_000L;
        long minutes = nanos / 60_000_000_000L % 60;
        long secondsNanos = nanos % 60_000_000_000L;
        StringBuilder b = new StringBuilder();
        if (hours > 0) {
            b.append(hours).append('h');
        }
        if (hours > 0 || minutes > 0) {
            b.append(minutes).append('m');
        }
        return b.append(fraction(secondsNanos, 9)).append('s').toString();
    }

    /** Go's {@code Time.String()} in UTC without the monotonic part: {@code 2006-01-02 15:04:05.123 +0000 UTC}. */
    static String time(long epochMillis) {
        Instant t = Instant.ofEpochMilli(epochMillis);
        String frac = fraction(t.getNano(), 9);
        // fraction() renders the whole part ("0"); Go prints only the trimmed fractional digits.
        String digits = frac.indexOf('.') < 0 ? "" : frac.substring(frac.indexOf('.'));
        return DATE_TIME.format(t) + digits + " +0000 UTC";
    }

    /** {@code value / 10^digits} with trailing zeros (and a bare point) removed. */
    private static String fraction(long value, int digits) {
        long scale = 1;
        for (int i = 0; i < digits; i++) {
            scale *= 10;
        }
        long whole = value / scale;
        long frac = value % scale;
        if (frac == 0) {
            return Long.toString(whole);
        }
        // Zero-padded to `digits`, then trailing zeros dropped; by hand, as String.format is slow
        // for something done a few times per client per snapshot.
        StringBuilder b = new StringBuilder(24).append(whole).append('.');
        String f = Long.toString(frac);
        for (int i = f.length(); i < digits; i++) {
            b.append('0');
        }
        int end = f.length();
        while (f.charAt(end - 1) == '0') {
            end--;
        }
        return b.append(f, 0, end).toString();
    }
}

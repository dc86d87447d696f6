package dev.crossbar.bench.load;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;

/** Command-line units: sizes ({@code 64}, {@code 4KiB}, {@code 1MiB}) and durations ({@code 500ms}, {@code 10s}, {@code 2m}). */
final class Units {

    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*(b|kib|kb|k|mib|mb|m)?");
    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m)?");

    private Units() {
    }

    static int parseSize(String text) {
        Matcher m = SIZE.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("size: '" + text + "' (expected: bytes, e.g. 64, 4600, 4KiB, 1MiB)");
        }
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "b" : m.group(2);
        long bytes = switch (unit) {
            case "b" -> n;
            case "k", "kb", "kib" -> n * 1024;
            default -> n * 1024 * 1024;
        };
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("size: '" + text + "' (expected: below 2 GiB)");
        }
        return (int) bytes;
    }

    static Duration parseDuration(String text) {
        Matcher m = DURATION.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("duration: '" + text + "' (expected: e.g. 500ms, 10s, 1.5s, 2m)");
        }
        double v = Double.parseDouble(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        double millis = switch (unit) {
            case "ms" -> v;
            case "m" -> v * 60_000;
            default -> v * 1000;
        };
        return Duration.ofMillis(Math.round(millis));
    }

    /** picocli converter for sizes. */
    static final class SizeConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            return parseSize(value);
        }
    }

    /** picocli converter for durations. */
    static final class DurationConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            return parseDuration(value);
        }
    }
}

package dev.crossbar.server.cli;

import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Converters for human-friendly sizes ({@code 10MiB}) and durations ({@code 30s}) on the command line. */
final class Units {

    private Units() {
    }

    /** Parses {@code 1234}, {@code 64KiB}, {@code 10MiB}, {@code 1GiB} (also KB/MB/GB as powers of 1024). */
    static long parseBytes(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        long multiplier = 1;
        String[][] suffixes = {{"gib", "1073741824"}, {"mib", "1048576"}, {"kib", "1024"},
                {"gb", "1073741824"}, {"mb", "1048576"}, {"kb", "1024"}, {"g", "1073741824"},
                {"m", "1048576"}, {"k", "1024"}, {"b", "1"}};
        for (String[] s : suffixes) {
            if (t.endsWith(s[0])) {
                multiplier = Long.parseLong(s[1]);
                t = t.substring(0, t.length() - s[0].length()).trim();
                break;
            }
        }
        try {
            long value = Long.parseLong(t);
            if (value < 0) {
                throw new TypeConversionException("'" + text + "' (expected: a size >= 0, e.g. 10MiB)");
            }
            return Math.multiplyExact(value, multiplier);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new TypeConversionException("'" + text + "' (expected: a size such as 1048576, 512KiB or 10MiB)");
        }
    }

    /** Parses {@code 250ms}, {@code 30s}, {@code 5m}, {@code 1h}, or ISO-8601 ({@code PT30S}). */
    static Duration parseDuration(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.equals("0")) {
            return Duration.ZERO; // "none", with no unit needed
        }
        try {
            if (t.startsWith("pt") || t.startsWith("p")) {
                return Duration.parse(text.trim().toUpperCase(Locale.ROOT));
            }
            if (t.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2).trim()));
            }
            long n = Long.parseLong(t.substring(0, t.length() - 1).trim());
            switch (t.charAt(t.length() - 1)) {
                case 's':
                    return Duration.ofSeconds(n);
                case 'm':
                    return Duration.ofMinutes(n);
                case 'h':
                    return Duration.ofHours(n);
                default:
                    break;
            }
        } catch (RuntimeException e) {
            // fall through to the one error message below
        }
        throw new TypeConversionException("'" + text + "' (expected: a duration such as 500ms, 30s or 5m)");
    }

    static final class BytesConverter implements ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            return parseBytes(value);
        }
    }

    static final class IntBytesConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            long v = parseBytes(value);
            if (v > Integer.MAX_VALUE - 1024) {
                throw new TypeConversionException("'" + value + "' (expected: at most 2GiB)");
            }
            return (int) v;
        }
    }

    static final class DurationConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            return parseDuration(value);
        }
    }
}

package dev.crossbar.bench.load;

import java.time.Duration;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The load generator's sizes ({@code 64}, {@code 4KiB}, {@code 1MiB}) and durations ({@code 500ms},
 * {@code 10s}, {@code 2m}): the relay's own grammar ({@link dev.crossbar.core.units.Units}), with
 * picocli's converters.
 */
final class Units {

    private Units() {
    }

    static int parseSize(String text) {
        return dev.crossbar.core.units.Units.parseIntBytes(text);
    }

    static Duration parseDuration(String text) {
        return dev.crossbar.core.units.Units.parseDuration(text);
    }

    /** picocli converter for sizes. */
    static final class SizeConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            try {
                return parseSize(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** picocli converter for durations. */
    static final class DurationConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                return parseDuration(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}

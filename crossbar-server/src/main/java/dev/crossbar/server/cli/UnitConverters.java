package dev.crossbar.server.cli;

import dev.crossbar.core.units.Units;
import java.time.Duration;
import java.util.function.Function;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** picocli's converters for sizes ({@code 10MiB}) and durations ({@code 30s}), in the grammar of {@link Units}. */
final class UnitConverters {

    private UnitConverters() {
    }

    /** Runs a parser of {@link Units}, its refusal turned into picocli's, which names the option. */
    private static <T> T convert(String value, Function<String, T> parse) {
        try {
            return parse.apply(value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }

    static final class BytesConverter implements ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            return UnitConverters.convert(value, Units::parseBytes);
        }
    }

    static final class IntBytesConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            return UnitConverters.convert(value, Units::parseIntBytes);
        }
    }

    static final class DurationConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            return UnitConverters.convert(value, Units::parseDuration);
        }
    }
}

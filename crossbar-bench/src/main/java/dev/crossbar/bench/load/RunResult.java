package dev.crossbar.bench.load;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The measured figures of one run (or the medians of several), in a fixed key order: written as
 * one JSON line, printed as a table row, read back by {@code scripts/plot.py}. A figure that does
 * not apply to the run (latency of idle connections, CPU of an in-process relay) is absent, never
 * zero.
 */
final class RunResult {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Map<String, Object> values = new LinkedHashMap<>();

    RunResult put(String key, Object value) {
        if (value != null) {
            values.put(key, value);
        }
        return this;
    }

    Object get(String key) {
        return values.get(key);
    }

    /** A numeric figure, or null when absent. */
    Double number(String key) {
        Object v = values.get(key);
        return v instanceof Number n ? n.doubleValue() : null;
    }

    Map<String, Object> values() {
        return Collections.unmodifiableMap(values);
    }

    String toJson() {
        try {
            return JSON.writeValueAsString(values);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write result as JSON", e);
        }
    }

    @Override
    public String toString() {
        return toJson();
    }
}

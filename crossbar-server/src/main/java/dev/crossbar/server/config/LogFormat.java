package dev.crossbar.server.config;

import java.util.Locale;

/** How each log event is written: one line of text, or one JSON object per line for a log collector. */
public enum LogFormat {
    TEXT, JSON;

    /** The name on the command line and in the configuration file. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** {@code text} or {@code json}, any case. */
    public static LogFormat of(String label) {
        for (LogFormat f : values()) {
            if (f.label().equalsIgnoreCase(label.trim())) {
                return f;
            }
        }
        throw new IllegalArgumentException("--log-format: '" + label + "' (expected: text or json)");
    }
}

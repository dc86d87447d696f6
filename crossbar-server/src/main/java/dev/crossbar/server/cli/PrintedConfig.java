package dev.crossbar.server.cli;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.crossbar.core.units.Units;
import java.time.Duration;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Model.OptionSpec;

/**
 * {@code --print-config}: the effective configuration as a YAML file the relay would read back,
 * each value followed by where it came from. Secrets (keys, passwords, tokens) are shown as
 * {@code <redacted>}; options that are not set are listed as comments.
 */
final class PrintedConfig {

    /** An option whose value is a secret never shows it. */
    static boolean isSecret(OptionSpec o) {
        String name = o.longestName().toLowerCase(Locale.ROOT);
        return name.contains("secret") && !name.endsWith("-file") || name.contains("password") || name.endsWith("-token");
    }

    private PrintedConfig() {
    }

    static String render(ConfigSources.Resolved resolved) {
        StringBuilder out = new StringBuilder("# Crossbar's effective configuration: flag > environment > file > default\n");
        for (OptionSpec o : ConfigSources.settings(resolved.commandLine())) {
            ConfigSources.Origin origin = resolved.origins().get(o.longestName());
            Object value = o.getValue();
            String key = ConfigSources.key(o);
            if (value == null || value instanceof Collection<?> c && c.isEmpty()) {
                out.append("# ").append(key).append(": (not set)\n");
                continue;
            }
            String comment = "  # " + origin;
            if (isSecret(o)) {
                out.append(key).append(": \"<redacted>\"").append(comment).append('\n');
            } else if (value instanceof Collection<?> c) {
                out.append(key).append(":").append(comment).append('\n');
                for (Object v : c) {
                    out.append("  - ").append(quote(text(o, v))).append('\n');
                }
            } else {
                out.append(key).append(": ").append(quote(text(o, value))).append(comment).append('\n');
            }
        }
        return out.toString();
    }

    /** A value as its option reads it: sizes and durations in their units. */
    private static String text(OptionSpec o, Object v) {
        if (v instanceof Duration d) {
            return Units.formatDuration(d);
        }
        boolean size = o.paramLabel().equals("SIZE");
        if (size && v instanceof Number n) {
            return Units.formatBytes(n.longValue());
        }
        return String.valueOf(v);
    }

    /** Double-quoted (YAML reads JSON strings), so that nothing in a value changes its meaning. */
    private static String quote(String s) {
        return "\"" + new String(JsonStringEncoder.getInstance().quoteAsString(s)) + "\"";
    }

    /** For tests: the origins by key. */
    static Map<String, ConfigSources.Origin> origins(ConfigSources.Resolved r) {
        return r.origins();
    }
}

package dev.crossbar.core.route;

import static java.util.Objects.requireNonNull;

/**
 * One line of the routing table: streams whose name matches {@code pattern} get {@code options}.
 *
 * @param source where the rule came from ({@code --route #2}, {@code routes.conf:7}), for errors
 *               and for the statistics that show which rule a topic follows
 */
public record StreamRule(StreamPattern pattern, StreamOptions options, String source) {

    public StreamRule {
        requireNonNull(pattern, "pattern");
        requireNonNull(options, "options");
        requireNonNull(source, "source");
    }

    /**
     * Parses {@code PATTERN:KEY=VALUE[,KEY=VALUE...]}, e.g. {@code /cam/*:start=keyframe,max-latency=500ms}.
     *
     * @throws InvalidRuleException saying what is wrong, prefixed with {@code source}
     */
    public static StreamRule parse(String text, String source) {
        String t = text.trim();
        int colon = t.indexOf(':');
        if (colon < 0) {
            throw new InvalidRuleException(source + ": '" + t
                    + "' is not PATTERN:KEY=VALUE[,KEY=VALUE...] (e.g. /cam/*:start=keyframe)");
        }
        try {
            return new StreamRule(StreamPattern.parse(t.substring(0, colon).trim()),
                    StreamOptions.parse(t.substring(colon + 1)), source);
        } catch (IllegalArgumentException e) {
            throw new InvalidRuleException(source + ": " + e.getMessage());
        }
    }

    /** The rule as it would be written: {@code /cam/*:start=keyframe}. */
    public String describe() {
        return pattern + ":" + options.describe();
    }
}

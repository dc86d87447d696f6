package dev.crossbar.core.route;

import java.util.Arrays;

/**
 * A glob over a stream's name, segment by segment: {@code *} is exactly one segment, {@code **}
 * any number of them (none included), anything else matches itself. {@code /cam/*} matches
 * {@code /cam/1} but not {@code /cam/1/hd}; {@code /cam/**} matches both, and {@code /cam}.
 *
 * <p>A stream's name is its path without the 1:N prefix: {@code /in/cam/1} and {@code /out/cam/1}
 * are the stream {@code /cam/1}, as is the N:N topic {@code /cam/1}.
 */
public final class StreamPattern {

    private static final String ONE = "*";
    private static final String ANY = "**";

    private final String text;
    private final String[] segments;

    private StreamPattern(String text, String[] segments) {
        this.text = text;
        this.segments = segments;
    }

    /** @throws IllegalArgumentException when the pattern is not an absolute, normalised path glob */
    public static StreamPattern parse(String text) {
        if (!text.startsWith("/")) {
            throw new IllegalArgumentException("pattern '" + text + "' must start with / (e.g. /cam/*)");
        }
        if (text.equals("/**")) {
            return new StreamPattern(text, new String[] {ANY});
        }
        String[] segments = text.substring(1).split("/", -1);
        for (String s : segments) {
            if (s.isEmpty()) {
                throw new IllegalArgumentException("pattern '" + text + "' has an empty segment");
            }
            if (s.contains("*") && !s.equals(ONE) && !s.equals(ANY)) {
                throw new IllegalArgumentException(
                        "pattern '" + text + "': '*' and '**' must be whole segments, not part of '" + s + "'");
            }
        }
        return new StreamPattern(text, segments);
    }

    /** Whether the stream named {@code name} (a normalised path, starting with /) matches. */
    public boolean matches(String name) {
        String[] parts = name.length() <= 1 ? new String[0] : name.substring(1).split("/", -1);
        return matches(0, parts, 0);
    }

    private boolean matches(int p, String[] parts, int i) {
        if (p == segments.length) {
            return i == parts.length;
        }
        String s = segments[p];
        if (s.equals(ANY)) {
            // Patterns are short and few, and this runs once per new topic, never per message.
            for (int j = i; j <= parts.length; j++) {
                if (matches(p + 1, parts, j)) {
                    return true;
                }
            }
            return false;
        }
        return i < parts.length && (s.equals(ONE) || s.equals(parts[i])) && matches(p + 1, parts, i + 1);
    }

    @Override
    public String toString() {
        return text;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StreamPattern other && Arrays.equals(segments, other.segments);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(segments);
    }
}

package dev.crossbar.core.route;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.schema.ManyToMany;
import dev.crossbar.core.schema.OneToMany;
import dev.crossbar.core.schema.Role;
import java.util.List;

/**
 * Turns a decoded URL path into a {@link Route}.
 *
 * <p>Normalisation follows the original crossbar: one leading slash, no trailing slash, and runs of
 * slashes fold into one. The grammar is in {@code docs/protocol.md}: a path is one or more segments
 * of any characters but control characters; {@code .} and {@code ..} segments are refused (a
 * proxy in front would resolve them and route elsewhere), and so is a path longer than the limit.
 */
public final class RouteParser {

    /** Default longest accepted path, in characters after normalisation. */
    public static final int DEFAULT_MAX_PATH_LENGTH = 256;

    /** The rules every Crossbar has: {@code /in/t} publishes to subscribers on {@code /out/t}. */
    public static final List<RouteRule> DEFAULT_RULES = List.of(
            new RouteRule("/in/", OneToMany.INSTANCE, Role.PUBLISHER),
            new RouteRule("/out/", OneToMany.INSTANCE, Role.SUBSCRIBER));

    private final List<RouteRule> rules;
    private final int maxPathLength;

    public RouteParser(List<RouteRule> rules, int maxPathLength) {
        this.rules = List.copyOf(requireNonNull(rules, "rules"));
        if (maxPathLength < 2) {
            throw new IllegalArgumentException("maxPathLength: " + maxPathLength + " (expected: >= 2)");
        }
        this.maxPathLength = maxPathLength;
    }

    public RouteParser(int maxPathLength) {
        this(DEFAULT_RULES, maxPathLength);
    }

    public RouteParser() {
        this(DEFAULT_MAX_PATH_LENGTH);
    }

    public int maxPathLength() {
        return maxPathLength;
    }

    /**
     * Parses a percent-decoded path (no query string).
     *
     * @throws InvalidRouteException with the reason, when the path cannot be a route
     */
    public Route parse(String rawPath) {
        requireNonNull(rawPath, "rawPath");
        String path = normalise(rawPath);
        if (path.length() > maxPathLength) {
            throw new InvalidRouteException(
                    "path too long: " + path.length() + " characters (expected: <= " + maxPathLength + ")");
        }
        if (path.equals("/")) {
            throw new InvalidRouteException("empty path: a topic name is required, e.g. /lab/camera");
        }
        for (RouteRule rule : rules) {
            String bare = rule.prefix().substring(0, rule.prefix().length() - 1);
            if (path.equals(bare)) {
                throw new InvalidRouteException("empty stream name after " + rule.prefix());
            }
            if (path.startsWith(rule.prefix())) {
                String stream = path.substring(rule.prefix().length());
                return new Route(path, new TopicKey(rule.schema(), stream), rule.role());
            }
        }
        return new Route(path, new TopicKey(ManyToMany.INSTANCE, path), Role.MEMBER);
    }

    /**
     * One leading slash, no trailing slash, no empty segments; refuses control characters and dot
     * segments. Public so that reserved paths are matched after the same normalisation as topics.
     *
     * @throws InvalidRouteException when the path cannot be normalised
     */
    public static String normalise(String raw) {
        StringBuilder out = new StringBuilder(raw.length() + 1);
        int segmentStart = -1;
        for (int i = 0; i <= raw.length(); i++) {
            char c = i < raw.length() ? raw.charAt(i) : '/';
            if (c == '/') {
                if (segmentStart >= 0) {
                    String segment = raw.substring(segmentStart, i);
                    if (segment.equals(".") || segment.equals("..")) {
                        throw new InvalidRouteException("dot segment '" + segment + "' in path");
                    }
                    out.append('/').append(segment);
                    segmentStart = -1;
                }
                continue;
            }
            if (Character.isISOControl(c)) {
                throw new InvalidRouteException(
                        String.format("control character U+%04X in path at index %d", (int) c, i));
            }
            if (Character.isSurrogate(c) && !validSurrogate(raw, i)) {
                throw new InvalidRouteException("unpaired surrogate in path at index " + i);
            }
            if (c == '\uFFFD') {
                throw new InvalidRouteException("path is not valid UTF-8");
            }
            if (segmentStart < 0) {
                segmentStart = i;
            }
        }
        return out.length() == 0 ? "/" : out.toString();
    }

    private static boolean validSurrogate(String s, int i) {
        char c = s.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
        }
        return i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
    }
}

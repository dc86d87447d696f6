package dev.crossbar.server.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** Reads the stats socket's JSON messages from a {@link JdkClient} and finds entries in them. */
public final class StatsReader {

    private static final ObjectMapper JSON = new ObjectMapper();

    private StatsReader() {
    }

    /** The next message as JSON; it must be a text message. */
    public static JsonNode next(JdkClient stats, Duration timeout) {
        Received r = stats.take(timeout);
        if (!r.text()) {
            throw new AssertionError("stats socket sent a binary message");
        }
        try {
            return JSON.readTree(r.data());
        } catch (IOException e) {
            throw new UncheckedIOException("stats socket sent invalid JSON: " + r.string(), e);
        }
    }

    /** Reads snapshots until one satisfies {@code until}, failing after {@code timeout}. */
    public static JsonNode nextWhere(JdkClient stats, Duration timeout, Predicate<JsonNode> until) {
        long deadline = System.nanoTime() + timeout.toNanos();
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            JsonNode s = next(stats, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            if (until.test(s)) {
                return s;
            }
            last = s;
        }
        throw new AssertionError("no snapshot matched within " + timeout + "; last: " + last);
    }

    /** Every client entry of a snapshot matching {@code filter}. */
    public static List<JsonNode> clients(JsonNode snapshot, Predicate<JsonNode> filter) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode c : snapshot.get("clients")) {
            if (filter.test(c)) {
                out.add(c);
            }
        }
        return out;
    }

    /** The one client with this user agent. */
    public static JsonNode clientByAgent(JsonNode snapshot, String userAgent) {
        List<JsonNode> found = clients(snapshot, c -> c.get("userAgent").asText().equals(userAgent));
        if (found.size() != 1) {
            throw new AssertionError(found.size() + " clients with user agent '" + userAgent + "' in " + snapshot);
        }
        return found.get(0);
    }

    /** The one topic with this display name. */
    public static JsonNode topic(JsonNode snapshot, String name) {
        for (JsonNode t : snapshot.get("topics")) {
            if (t.get("topic").asText().equals(name)) {
                return t;
            }
        }
        throw new AssertionError("no topic '" + name + "' in " + snapshot);
    }
}

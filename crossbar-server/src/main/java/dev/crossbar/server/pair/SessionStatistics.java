package dev.crossbar.server.pair;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.route.TopicKey;
import dev.crossbar.server.stats.SessionSource;
import dev.crossbar.server.stats.Snapshot.SessionStreamView;
import dev.crossbar.server.stats.Snapshot.SessionView;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The 1:1 sessions as statistics show them: per session stream, its hosts here, the sessions waiting
 * for a host, and each open session's age and the messages and bytes it has carried each way. Never
 * what was said, and never a session's path (its host's credential while it waits).
 */
public final class SessionStatistics implements SessionSource {

    private static final double NANOS_PER_SECOND = 1e9;

    private final SessionRegistry registry;

    public SessionStatistics(SessionRegistry registry) {
        this.registry = requireNonNull(registry, "registry");
    }

    @Override
    public List<SessionStreamView> sessions(long nowNanos) {
        Map<String, Stream> streams = new TreeMap<>();
        registry.hostsByStream().forEach((key, hosts) -> stream(streams, key).hosts = hosts);
        for (Session s : registry.waitingSessions()) {
            stream(streams, s.stream()).waiting++;
        }
        for (Session s : registry.openSessions()) {
            SessionEnd host = s.hostSide();
            long paired = s.pairedAtNanos();
            if (host == null || paired == 0) {
                continue;
            }
            stream(streams, s.stream()).open.add(new SessionView(
                    Math.round((nowNanos - paired) / NANOS_PER_SECOND * 10) / 10.0,
                    s.client().forwardedMessages(), s.client().forwardedBytes(),
                    host.forwardedMessages(), host.forwardedBytes()));
        }
        List<SessionStreamView> out = new ArrayList<>(streams.size());
        streams.forEach((name, st) -> {
            st.open.sort(Comparator.comparingDouble(SessionView::ageSeconds).reversed());
            out.add(new SessionStreamView(name, st.hosts, st.waiting, List.copyOf(st.open)));
        });
        return out;
    }

    private static Stream stream(Map<String, Stream> streams, TopicKey key) {
        return streams.computeIfAbsent(SessionRegistry.name(key), k -> new Stream());
    }

    /** A stream's counts while they are gathered. */
    private static final class Stream {
        int hosts;
        int waiting;
        final List<SessionView> open = new ArrayList<>();
    }
}

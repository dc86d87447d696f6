package dev.crossbar.server.stats;

import java.util.List;

/**
 * What statistics show of the relay's 1:1 sessions ({@code schema=session} streams): per stream,
 * its hosts, the sessions waiting for one and each open session's age and traffic, never content.
 * Owned by {@code stats} so that snapshots need nothing from the part that keeps the sessions.
 */
@FunctionalInterface
public interface SessionSource {

    /** No session streams: a relay without them, or a test. */
    SessionSource NONE = nowNanos -> List.of();

    /** The session streams with a host or a session now, by name. Called on the statistics thread. */
    List<Snapshot.SessionStreamView> sessions(long nowNanos);
}

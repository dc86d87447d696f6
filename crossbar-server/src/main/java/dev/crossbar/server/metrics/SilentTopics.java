package dev.crossbar.server.metrics;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.relay.Member;
import dev.crossbar.core.schema.Role;
import dev.crossbar.core.stats.ConnectionStats;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.core.topic.TopicRegistry;
import java.time.Duration;

/**
 * Counts 1:N topics whose publisher is connected but has sent nothing for {@link #SILENT_AFTER}: a
 * stalled camera, seen by an alert without a per-topic metric (which would be an unbounded tag).
 * Read on a scrape, off the event loops; the counters it reads are the ones the loops store opaquely.
 */
final class SilentTopics {

    /**
     * How long a connected publisher may send nothing before its topic counts as silent: far longer
     * than any lab stream's frame interval, short enough to page before users call.
     */
    static final Duration SILENT_AFTER = Duration.ofSeconds(60);

    private final TopicRegistry topics;

    SilentTopics(TopicRegistry topics) {
        this.topics = requireNonNull(topics, "topics");
    }

    /** Topics with a connected publisher none of whose publishers sent within {@link #SILENT_AFTER}. */
    int count() {
        long now = System.nanoTime();
        long bound = SILENT_AFTER.toNanos();
        int silent = 0;
        for (Topic t : topics.topics()) {
            boolean hasPublisher = false;
            long latest = Long.MIN_VALUE;
            for (Member m : t.members()) {
                if (m.route().role() == Role.PUBLISHER) {
                    hasPublisher = true;
                    ConnectionStats s = m.stats();
                    // A publisher that never sent counts from when it connected.
                    long last = s.lastInNanos() != 0 ? s.lastInNanos() : s.connectedAtNanos();
                    latest = Math.max(latest, last);
                }
            }
            if (hasPublisher && now - latest > bound) {
                silent++;
            }
        }
        return silent;
    }
}

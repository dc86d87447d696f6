package dev.crossbar.server.cluster;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;

/**
 * Logs the first occurrence of each kind of trouble at WARN and later ones at DEBUG: a link that drops
 * thousands of messages a second says so once (the counters carry the numbers), never floods the log.
 */
final class WarnOnce {

    /** Kinds remembered; server error texts can name subjects, so the set must not grow with topics. */
    static final int MAX_KINDS = 64;

    private final Logger log;
    private final Set<String> seen = ConcurrentHashMap.newKeySet();

    WarnOnce(Logger log) {
        this.log = log;
    }

    void warn(String kind, String format, Object... args) {
        if (seen.size() < MAX_KINDS && seen.add(kind)) {
            log.warn(format + " (logged once; see the crossbar.nats.* counters)", args);
        } else if (log.isDebugEnabled()) {
            log.debug(format, args);
        }
    }

    /** Lets {@code kind} warn again, e.g. after the link has recovered. */
    void reset(String kind) {
        seen.remove(kind);
    }
}

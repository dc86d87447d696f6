package dev.crossbar.server.pair;

import static java.util.Objects.requireNonNull;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/** 1:1 sessions' meters: hosts, open and waiting sessions, offers and those never opened. */
public final class SessionMetrics implements MeterBinder {

    public static final String SESSION_HOSTS = "crossbar.session.hosts";
    public static final String SESSIONS_OPEN = "crossbar.sessions.open";
    public static final String SESSIONS_WAITING = "crossbar.sessions.waiting";
    public static final String SESSIONS_STARTED = "crossbar.sessions.started";
    public static final String SESSIONS_UNOPENED = "crossbar.sessions.unopened";

    private final SessionRegistry pairs;

    public SessionMetrics(SessionRegistry pairs) {
        this.pairs = requireNonNull(pairs, "pairs");
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder(SESSION_HOSTS, pairs, SessionRegistry::hosts)
                .description("Hosts connected to schema=session streams").register(registry);
        Gauge.builder(SESSIONS_OPEN, pairs, SessionRegistry::open)
                .description("1:1 sessions open (host and client paired)").register(registry);
        Gauge.builder(SESSIONS_WAITING, pairs, SessionRegistry::waiting)
                .description("1:1 sessions offered to a host and not yet opened").register(registry);
        FunctionCounter.builder(SESSIONS_STARTED, pairs, SessionRegistry::started)
                .description("1:1 sessions offered to hosts").register(registry);
        FunctionCounter.builder(SESSIONS_UNOPENED, pairs, SessionRegistry::unopened)
                .description("1:1 sessions that ended before their host opened them").register(registry);
    }
}

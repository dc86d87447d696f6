package dev.crossbar.server;

import dev.crossbar.core.stats.ConnectionStats;
import dev.crossbar.server.http.Draining;
import dev.crossbar.server.session.IngestSession;
import dev.crossbar.server.session.RelaySession;
import dev.crossbar.server.websocket.CloseCodes;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import io.netty.channel.Channel;
import io.netty.channel.group.ChannelGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Empties a node before a restart ({@code POST /admin/drain}, SIGTERM): new upgrades are refused
 * (503) and {@code /healthz} says draining, so the load balancer sends clients elsewhere; every
 * client is closed with 1012 (service restart) so that it reconnects, to another node. A lossless
 * stream ({@code slow=backpressure}) is let finish first: its connections close once they have
 * been quiet for {@link #QUIET} with nothing held back or waiting to be sent, or at the drain's
 * deadline with a reason that says how many messages went each way (counted on the connection's
 * own loop as the close frame goes, so the count is exact), so neither end is left guessing where
 * the transfer stopped.
 */
final class Drain {

    private static final Logger log = LoggerFactory.getLogger(Drain.class);

    /** A lossless connection this long without a message in either direction has finished its transfer. */
    static final Duration QUIET = Duration.ofSeconds(1);
    /** How often the drain looks at what is left. */
    private static final long CHECK_MILLIS = 100;
    /** After the deadline, how long closed clients get to answer their close frames before the drain ends. */
    private static final long CLOSE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final ChannelGroup sessions;
    private final Draining draining;
    private final EventExecutor timer;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private long deadlineNanos;
    private ScheduledFuture<?> checks;

    Drain(ChannelGroup sessions, Draining draining, EventExecutor timer) {
        this.sessions = sessions;
        this.draining = draining;
        this.timer = timer;
    }

    /** Starts draining; the future completes once every client has gone, or soon after {@code timeout}. */
    CompletableFuture<Void> start(Duration timeout) {
        draining.start();
        deadlineNanos = System.nanoTime() + timeout.toNanos();
        int lossless = 0;
        for (Channel ch : sessions) {
            IngestSession ingest = ch.pipeline().get(IngestSession.class);
            if (ingest != null) {
                // An HTTP poster: 503 now, or, uploading on a lossless stream, at the deadline if still going.
                if (ingest.lossless() && !timeout.isZero()) {
                    lossless++;
                } else {
                    ingest.restarting(false);
                }
                continue;
            }
            RelaySession s = ch.pipeline().get(RelaySession.class);
            if (s != null && s.lossless() && !timeout.isZero()) {
                lossless++;
            } else {
                close(ch, s, st -> "relay restarting: reconnect, to another node if there is one");
            }
        }
        log.info("Draining before a restart: new connections refused, /healthz says draining; {} clients closed "
                + "with 1012, {} on lossless streams let finish for up to {}", sessions.size() - lossless, lossless, timeout);
        checks = timer.scheduleAtFixedRate(this::check, CHECK_MILLIS, CHECK_MILLIS, TimeUnit.MILLISECONDS);
        return done;
    }

    private void check() {
        long now = System.nanoTime();
        boolean late = now - deadlineNanos >= 0;
        for (Channel ch : sessions) {
            IngestSession ingest = ch.pipeline().get(IngestSession.class);
            if (ingest != null) {
                if (late) {
                    ingest.restarting(true); // else it ends by itself when its body does
                }
                continue;
            }
            RelaySession s = ch.pipeline().get(RelaySession.class);
            if (s == null) {
                continue; // closing already
            }
            ConnectionStats st = s.stats();
            long last = Math.max(Math.max(st.lastInNanos(), st.lastOutNanos()), st.connectedAtNanos());
            if (late) {
                close(ch, s, c -> "relay restarting before this lossless stream finished: this connection sent "
                        + c.messagesIn() + " and received " + c.messagesOut() + " messages; resend from there");
            } else if (now - last >= QUIET.toNanos() && !s.busy()) {
                close(ch, s, c -> "relay restarting: this lossless stream was quiet (" + c.messagesIn() + " messages in, "
                        + c.messagesOut() + " out); reconnect");
            }
        }
        if (sessions.isEmpty() || now - deadlineNanos >= CLOSE_GRACE_NANOS) {
            checks.cancel(false);
            done.complete(null);
        }
    }

    /** Closes with 1012 on the connection's loop, the reason made there from its counts (no message can follow). */
    private static void close(Channel ch, RelaySession session, Function<ConnectionStats, String> reason) {
        if (session != null) {
            session.executor().execute(() -> session.close(CloseCodes.SERVICE_RESTART, reason.apply(session.stats())));
            return;
        }
        ConnectionLifecycle lifecycle = ch.pipeline().get(ConnectionLifecycle.class);
        if (lifecycle != null) {
            ch.eventLoop().execute(() -> lifecycle.close(CloseCodes.SERVICE_RESTART, reason.apply(null)));
        } else {
            ch.close();
        }
    }
}

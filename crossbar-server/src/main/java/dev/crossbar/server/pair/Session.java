package dev.crossbar.server.pair;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.route.TopicKey;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One 1:1 session, from the offer to its end: a client, the host it was offered to, and, once the
 * host opens {@code /session/<id>}, that connection. It moves WAITING (offered) → CLAIMED (the host's
 * upgrade took the path; nobody else can) → PAIRED (bytes flow), and from any of them to ENDED, once:
 * whatever ends it closes every side still open with one close code and reason.
 *
 * <p>Any thread: the state is atomic; the ends close themselves on their own loops.
 */
final class Session {

    enum State { WAITING, CLAIMED, PAIRED, ENDED }

    private final String id;
    private final TopicKey stream;
    private final SessionEnd client;
    private final SessionHost host;
    private final SessionRegistry registry;
    private final AtomicReference<State> state = new AtomicReference<>(State.WAITING);
    /** The host's end, from the claim on. */
    private volatile SessionEnd hostSide;
    private volatile ScheduledFuture<?> openTimer;
    /** When the host opened it ({@link System#nanoTime()}), for statistics; 0 until then. */
    private volatile long pairedAtNanos;

    Session(String id, TopicKey stream, SessionEnd client, SessionHost host, SessionRegistry registry) {
        this.id = requireNonNull(id, "id");
        this.stream = requireNonNull(stream, "stream");
        this.client = requireNonNull(client, "client");
        this.host = requireNonNull(host, "host");
        this.registry = requireNonNull(registry, "registry");
    }

    String id() {
        return id;
    }

    String path() {
        return SessionPaths.path(id);
    }

    TopicKey stream() {
        return stream;
    }

    SessionEnd client() {
        return client;
    }

    SessionHost host() {
        return host;
    }

    State state() {
        return state.get();
    }

    long pairedAtNanos() {
        return pairedAtNanos;
    }

    /** The host's end, once it has claimed the session; else null. */
    SessionEnd hostSide() {
        return hostSide;
    }

    void openTimer(ScheduledFuture<?> timer) {
        this.openTimer = timer;
    }

    /** The host's upgrade to this session's path: true once, for the first; the path is spent. */
    boolean claim() {
        return state.compareAndSet(State.WAITING, State.CLAIMED);
    }

    /** The claiming connection's end, which {@link #end} closes too (if it ended meanwhile: now). */
    void hostSide(SessionEnd end) {
        this.hostSide = end;
    }

    /** The host's connection is upgraded: bytes may flow. False if the session ended meanwhile. */
    boolean pair() {
        if (!state.compareAndSet(State.CLAIMED, State.PAIRED)) {
            return false;
        }
        cancelTimer();
        pairedAtNanos = System.nanoTime();
        registry.paired(this);
        return true;
    }

    /** Ends the session unless it is already paired (the open timeout). */
    void endUnlessOpen(WebSocketCloseStatus status, String reason) {
        State s;
        while ((s = state.get()) == State.WAITING || s == State.CLAIMED) {
            if (state.compareAndSet(s, State.ENDED)) {
                ended(s, null, status, reason);
                return;
            }
        }
    }

    /**
     * Ends the session, once: every side but {@code from} (the side that closed, or null) is closed
     * with {@code status} and {@code reason}.
     */
    void end(SessionEnd from, WebSocketCloseStatus status, String reason) {
        State s = state.getAndSet(State.ENDED);
        if (s != State.ENDED) {
            ended(s, from, status, reason);
        }
    }

    private void ended(State was, SessionEnd from, WebSocketCloseStatus status, String reason) {
        cancelTimer();
        client.audit(was == State.PAIRED ? "session-ended" : "session-unopened").field("session", id)
                .code(status.code()).reason(reason).log();
        registry.ended(this, was);
        host.forget(this);
        if (client != from) {
            client.closeBy(status, reason);
        }
        SessionEnd h = hostSide;
        if (h != null && h != from) {
            h.closeBy(status, reason);
        }
    }

    private void cancelTimer() {
        ScheduledFuture<?> t = openTimer;
        if (t != null) {
            t.cancel(false);
        }
    }
}

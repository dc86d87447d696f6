package dev.crossbar.server.pair;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.route.Route;
import dev.crossbar.core.route.RoutingTable;
import dev.crossbar.core.schema.Role;
import dev.crossbar.server.auth.AccessEnforcer;
import dev.crossbar.server.auth.AuthGate;
import dev.crossbar.server.http.HandshakeFailures.Reason;
import dev.crossbar.server.http.Refused;
import dev.crossbar.server.http.UpgradeAdmission;
import dev.crossbar.server.session.RelaySession;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * The upgrade gate's part for sessions: decides, before the upgrade, what a request on a session
 * stream or a session path becomes, and fits the connection's pipeline for it. The relay's own
 * session handler is replaced by a {@link HostEnd} ({@code /in/<t>}) or a {@link SessionEnd}
 * ({@code /out/<t>}, {@code /session/<id>}); a session path needs no token (its id is the
 * credential, spent by this upgrade), so the token handlers leave its pipeline.
 *
 * <p>Ordinary streams cost one boolean test ({@link RoutingTable#hasSessions()}).
 */
public final class SessionGate implements UpgradeAdmission {

    private final SessionRegistry registry;
    private final RoutingTable routing;
    private final ChannelGroup group;

    public SessionGate(SessionRegistry registry, RoutingTable routing, ChannelGroup group) {
        this.registry = requireNonNull(registry, "registry");
        this.routing = requireNonNull(routing, "routing");
        this.group = requireNonNull(group, "group");
    }

    /**
     * A request on the reserved {@code /session} prefix claims the session waiting there; on a
     * {@code schema=session} stream it becomes a host or a client; any other route is an ordinary topic.
     */
    @Override
    public Admission admit(ChannelPipeline p, Route route) {
        return SessionPaths.isReserved(route.path()) ? claim(p, route.path()) : admitStream(p, route);
    }

    /**
     * A request on the reserved {@code /session} prefix ({@link SessionPaths#isReserved}): admitted only
     * to a session waiting for its host at exactly that path, which it claims (no one else can).
     *
     * @param path the normalised path
     */
    Admission claim(ChannelPipeline p, String path) {
        String id = SessionPaths.idOf(path);
        Session session = id == null ? null : registry.claim(id);
        if (session == null) {
            return new Admission(null, new Refused(HttpResponseStatus.NOT_FOUND, Reason.NO_SESSION,
                    "no session waits at this path (a session path works once, while its client waits)"));
        }
        SessionEnd end = SessionEnd.host(registry, group, session.stream());
        fit(p, end, true);
        end.claimed(session);
        session.hostSide(end);
        // The client's stream, so that the home loop places this connection beside its client.
        return new Admission(new Route(path, session.stream(), Role.PUBLISHER), null);
    }

    /**
     * Any other route: null (an ordinary topic) unless its stream is {@code schema=session}; then
     * {@code /in/<t>} is a host, {@code /out/<t>} a client, and the N:N path of the same name is refused.
     */
    private Admission admitStream(ChannelPipeline p, Route route) {
        if (!routing.hasSessions() || !routing.resolve(route.topic()).session()) {
            return null;
        }
        switch (route.role()) {
            case PUBLISHER -> fit(p, new HostEnd(registry, group, route.topic()), false);
            case SUBSCRIBER -> fit(p, SessionEnd.client(registry, group, route.topic()), false);
            default -> {
                String name = route.path();
                return new Admission(null, new Refused(HttpResponseStatus.BAD_REQUEST, Reason.BAD_ROUTE, name
                        + " is a session stream: hosts connect to /in" + name + ", clients to /out" + name));
            }
        }
        return new Admission(route, null);
    }

    private static void fit(ChannelPipeline p, io.netty.channel.ChannelHandler end, boolean sessionPath) {
        String name = end instanceof HostEnd ? "session-host" : "session-end";
        p.replace(RelaySession.class, name, end);
        if (sessionPath) {
            if (p.get(AuthGate.class) != null) {
                p.remove(AuthGate.class);
            }
            if (p.get(AccessEnforcer.class) != null) {
                p.remove(AccessEnforcer.class);
            }
        }
    }
}

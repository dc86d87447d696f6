package dev.crossbar.server.pair;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.websocket.ClientInfo;
import dev.crossbar.server.websocket.CloseCodes;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A session offered through the cluster ({@link SessionCluster}): the node of one host of the stream
 * answers with that host's id, so that the host's departure, announced to every node, ends the
 * session here. No answer within the open timeout: no host anywhere, and the client is closed.
 */
final class RemoteHost implements SessionHost {

    private final SessionRegistry registry;
    private final SessionCluster link;
    private volatile String hostId;

    RemoteHost(SessionRegistry registry, SessionCluster link) {
        this.registry = requireNonNull(registry, "registry");
        this.link = requireNonNull(link, "link");
    }

    @Override
    public void offer(Session session, Map<String, Object> c) {
        Map<String, Object> offer = new LinkedHashMap<>();
        offer.put("key", session.stream().name());
        offer.put("stream", SessionRegistry.name(session.stream()));
        offer.put("session", session.path());
        offer.put("url", link.url() + session.path());
        offer.put("client", c);
        link.offer(session.stream(), offer, registry.config().openTimeout()).whenComplete((host, e) -> {
            if (host == null) {
                session.endUnlessOpen(CloseCodes.TRY_AGAIN_LATER,
                        "no host on " + SessionRegistry.name(session.stream()) + "; try again later");
            } else {
                hostId = host;
                registry.remoteOffered(host, session);
            }
        });
    }

    @Override
    public void forget(Session session) {
        String h = hostId;
        if (h != null) {
            registry.remoteForget(h, session);
        }
    }
}

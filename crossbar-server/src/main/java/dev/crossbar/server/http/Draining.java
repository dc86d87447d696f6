package dev.crossbar.server.http;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.route.Route;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * Whether this node is draining before a restart. While it is, new WebSocket upgrades are refused
 * with 503 (the client tries another node) and {@code /healthz} says so, so a load balancer stops
 * sending; plain HTTP (health, metrics, statistics) is still answered. Wraps the admission of the
 * upgrades that do not join a topic, so the gate needs nothing new.
 */
public final class Draining {

    private volatile boolean draining;

    /** From now on: upgrades refused, {@code /healthz} draining. */
    public void start() {
        draining = true;
    }

    public boolean isDraining() {
        return draining;
    }

    /** {@code next}'s admission, refusing every upgrade first while draining. */
    public UpgradeAdmission admission(UpgradeAdmission next) {
        requireNonNull(next, "next");
        return (ChannelPipeline pipeline, Route route) -> draining
                ? new UpgradeAdmission.Admission(null, new Refused(HttpResponseStatus.SERVICE_UNAVAILABLE,
                        HandshakeFailures.Reason.DRAINING, "this relay is draining before a restart; connect to another node"))
                : next.admit(pipeline, route);
    }
}

package dev.crossbar.server.http;

import dev.crossbar.core.route.Route;
import io.netty.channel.ChannelPipeline;

/**
 * A part of the relay that takes some WebSocket upgrades over before they join a topic (the 1:1
 * sessions of {@code schema=session} streams): the gate asks it about every valid route, and it
 * either lets the route pass as an ordinary topic, or fits the connection's pipeline for itself,
 * or refuses. Owned by {@code http} so that the gate needs nothing from the parts that implement it.
 */
public interface UpgradeAdmission {

    /** Lets every route pass as an ordinary topic: no sessions here. */
    UpgradeAdmission NONE = (pipeline, route) -> null;

    /**
     * What {@code route} becomes: null for an ordinary topic; otherwise the route to go on with
     * (the pipeline already fitted) or a refusal.
     */
    Admission admit(ChannelPipeline pipeline, Route route);

    /** Go on with {@code route}, or refuse with {@code refused}: exactly one is set. */
    record Admission(Route route, Refused refused) {
    }
}

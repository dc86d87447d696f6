package dev.crossbar.core.relay;

import io.netty.util.concurrent.EventExecutor;

/** The receivers of a topic that share one event loop: the unit of one fan-out task. */
public record LoopGroup(EventExecutor loop, Member[] members) {

    /** Whether anyone in this group would receive a message from {@code sender}. */
    public boolean reachesOtherThan(Member sender) {
        return members.length > 1 || members[0] != sender;
    }
}

package dev.crossbar.server.transport;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.route.Route;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.websocket.ClientInfo;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler.HandshakeComplete;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a new WebSocket connection onto its topic's home event loop when the upgrade completes,
 * while the topic has fewer than {@code maxMembers} members. Netty spreads connections over the
 * loops round-robin, so the two ends of a small topic usually sit on different threads and every
 * message is handed from one to the other and wakes it. On one loop the router delivers in the
 * same thread, after the read that brought the message. A topic past {@code maxMembers} places
 * each further member on the loop with the fewest of its members, so a big fan-out keeps every
 * core, evenly.
 *
 * <p>A 1:N stream is placed by role instead, while {@code awayReceivers} is not 0: its publishers
 * on its home loop, its first subscriber there too (a 1:1 stream never crosses threads), every
 * further subscriber on one of the other loops, the one with the fewest of the topic's members,
 * while it has fewer than {@code awayReceivers}; past that, on the loop with the fewest overall.
 * Why: the loop that reads a message then only hands it over, once per read, and the receivers are
 * written together by loops that do nothing else for the topic. Split half and half, the reading
 * loop's own receivers were written at once and the others' after the hand-off, a step behind.
 * Fan-out of 4,600 B to 100 flat out, beside the tokio peer: the spread of a moment's latencies
 * now the peer's, p99 relative to the rate 6-10 % shorter than before (docs/benchmarks/journal.md,
 * "Placing a fan-out's receivers by role").
 *
 * <p>The move: reads stop (a message read before the session has joined would be dropped), the
 * channel leaves its loop and registers with the home loop, the idle timer is re-armed there (a
 * timer stays on the loop that scheduled it), then the handshake event goes on, the session joins,
 * and reads resume. Handlers after this one see the handshake on the home loop, so their timers are
 * scheduled there. If the move fails the connection is closed.
 *
 * <p>Ownership: no messages pass through here; it sees only the handshake event, and removes itself.
 */
@Sharable
public final class HomeLoop extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(HomeLoop.class);

    private final List<EventLoop> loops;
    private final TopicRegistry topics;
    private final int maxMembers;
    private final int awayReceivers;
    private final String idleName;
    private final Supplier<ChannelHandler> idleTimer;

    /**
     * @param loops      the loops connections are served on
     * @param maxMembers members a topic places on its home loop before further ones go to its least-used loop
     * @param awayReceivers a 1:N stream's subscribers each other loop takes before the home loop takes more; 0:
     *                   a 1:N stream is placed like any topic
     * @param idleName   pipeline name of the idle timer, replaced by a fresh {@code idleTimer} after a move
     */
    public HomeLoop(List<EventLoop> loops, TopicRegistry topics, int maxMembers, int awayReceivers, String idleName,
                    Supplier<ChannelHandler> idleTimer) {
        this.loops = List.copyOf(loops);
        this.topics = requireNonNull(topics, "topics");
        if (maxMembers < 1) {
            throw new IllegalArgumentException("maxMembers: " + maxMembers + " (expected: > 0)");
        }
        this.maxMembers = maxMembers;
        if (awayReceivers < 0) {
            throw new IllegalArgumentException("awayReceivers: " + awayReceivers + " (expected: >= 0)");
        }
        this.awayReceivers = awayReceivers;
        this.idleName = requireNonNull(idleName, "idleName");
        this.idleTimer = requireNonNull(idleTimer, "idleTimer");
    }

    /** The loop a topic's first members share; any thread. */
    EventLoop homeOf(TopicKey key) {
        return loops.get(Math.floorMod(key.hashCode(), loops.size()));
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (!(evt instanceof HandshakeComplete)) {
            ctx.fireUserEventTriggered(evt);
            return;
        }
        ctx.pipeline().remove(this);
        Channel ch = ctx.channel();
        EventLoop home = destination(ch);
        if (home == null || home == ch.eventLoop()) {
            ctx.fireUserEventTriggered(evt);
            return;
        }
        ch.config().setAutoRead(false);
        ch.deregister().addListener(left -> {
            if (!left.isSuccess()) {
                failed(ch, left.cause());
                return;
            }
            home.register(ch).addListener(joined -> {
                if (!joined.isSuccess()) {
                    failed(ch, joined.cause());
                    return;
                }
                if (ch.pipeline().get(idleName) != null) {
                    ch.pipeline().replace(idleName, idleName, idleTimer.get());
                }
                // The context was removed above; it still forwards to the handler after it.
                ctx.fireUserEventTriggered(evt);
                ch.config().setAutoRead(true);
            });
        });
    }

    /**
     * The home loop while the topic is small; past that, the loop with the fewest of its members
     * (the current one on a tie), so a big fan-out ends up even across the loops. A 1:N stream's
     * members by role (see the class comment). Null: no route.
     */
    private EventLoop destination(Channel ch) {
        ClientInfo client = ch.hasAttr(ClientInfo.KEY) ? ch.attr(ClientInfo.KEY).get() : null;
        if (client == null) {
            return null;
        }
        Route route = client.route();
        TopicKey key = route.topic();
        EventLoop home = homeOf(key);
        Topic topic = topics.get(key);
        if (awayReceivers > 0 && route.canSend() != route.canReceive()) {
            return byRole(route, topic, home, ch.eventLoop());
        }
        if (topic == null || topic.size() < maxMembers) {
            return home;
        }
        return leastLoaded(topic, ch.eventLoop(), null);
    }

    /** A 1:N stream's publisher or subscriber: see the class comment. */
    private EventLoop byRole(Route route, Topic topic, EventLoop home, EventLoop current) {
        if (route.canSend() || topic == null || topic.receiverCount() == 0) {
            return home;
        }
        EventLoop away = leastLoaded(topic, current, home);
        return topic.membersOn(away) < awayReceivers ? away : leastLoaded(topic, current, null);
    }

    /**
     * The loop with the fewest of the topic's members, other than {@code excluded} (null: none),
     * {@code current} on a tie. O(loops), not O(members): a join storm on a big topic stays linear.
     */
    private EventLoop leastLoaded(Topic topic, EventLoop current, EventLoop excluded) {
        EventLoop best = null;
        int fewest = Integer.MAX_VALUE;
        for (EventLoop loop : loops) {
            int n = topic.membersOn(loop);
            if (loop != excluded && (n < fewest || (n == fewest && loop == current))) {
                best = loop;
                fewest = n;
            }
        }
        return best;
    }

    private static void failed(Channel ch, Throwable cause) {
        log.debug("{} could not move to its topic's event loop; closing", ch, cause);
        ch.close();
    }
}

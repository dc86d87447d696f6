package dev.crossbar.server.transport;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.route.Route;
import dev.crossbar.core.route.TopicKey;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.core.topic.TopicRegistry;
import dev.crossbar.server.websocket.ClientInfo;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandler;
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
    private final String idleName;
    private final Supplier<ChannelHandler> idleTimer;

    /**
     * @param loops      the loops connections are served on
     * @param maxMembers members a topic places on its home loop before further ones go to its least-used loop
     * @param idleName   pipeline name of the idle timer, replaced by a fresh {@code idleTimer} after a move
     */
    public HomeLoop(List<EventLoop> loops, TopicRegistry topics, int maxMembers, String idleName,
                    Supplier<ChannelHandler> idleTimer) {
        this.loops = List.copyOf(loops);
        this.topics = requireNonNull(topics, "topics");
        if (maxMembers < 1) {
            throw new IllegalArgumentException("maxMembers: " + maxMembers + " (expected: > 0)");
        }
        this.maxMembers = maxMembers;
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
     * (the current one on a tie), so a big fan-out ends up even across the loops. Null: no route.
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
        if (topic == null || topic.size() < maxMembers) {
            return home;
        }
        return leastLoaded(topic, ch.eventLoop());
    }

    /**
     * The loop with the fewest of the topic's members, {@code current} on a tie. O(loops), not O(members): a join storm on a big topic stays linear.
     */
    private EventLoop leastLoaded(Topic topic, EventLoop current) {
        EventLoop best = null;
        int fewest = Integer.MAX_VALUE;
        for (EventLoop loop : loops) {
            int n = topic.membersOn(loop);
            if (n < fewest || (n == fewest && loop == current)) {
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

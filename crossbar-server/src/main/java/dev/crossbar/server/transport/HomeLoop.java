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
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a new WebSocket connection onto its topic's home event loop before its upgrade is
 * answered, while the topic has fewer than {@code maxMembers} members. Netty spreads connections
 * over the loops round-robin, so the two ends of a small topic usually sit on different threads and
 * every message is handed from one to the other and wakes it. On one loop the router delivers in
 * the same thread, after the read that brought the message. A topic past {@code maxMembers} places
 * each further member on the loop with the fewest of its members, so a big fan-out keeps every
 * core, evenly.
 *
 * <p>The move, when the upgrade request has passed the gates: reads stop, the channel leaves its
 * loop and registers with the home loop, the idle timer is re-armed there (a timer stays on the
 * loop that scheduled it), then the request goes on to the handshake, and reads resume. So the 101
 * is written on the home loop, and the session joins its topic there as that write completes: a
 * client that has its 101 is a member, and gets every message published after it. (Moving after
 * the 101 left a window, widest on a freshly started relay, in which a publisher that connected
 * right after a viewer had its first message relayed to nobody.) If the move fails the request is
 * released and the connection closed.
 *
 * <p>Ownership: the upgrade request ({@code FullHttpRequest}) is held across the move and passed on,
 * or released if the move fails; everything else passes through untouched.
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
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        Channel ch = ctx.channel();
        // The upgrade gate names the route of a WebSocket upgrade it lets through; other requests pass.
        if (!(msg instanceof FullHttpRequest) || !ch.hasAttr(ClientInfo.KEY) || ch.attr(ClientInfo.KEY).get() == null) {
            ctx.fireChannelRead(msg);
            return;
        }
        ctx.pipeline().remove(this);
        EventLoop home = destination(ch.attr(ClientInfo.KEY).get(), ch.eventLoop());
        if (home == ch.eventLoop()) {
            ctx.fireChannelRead(msg);
            return;
        }
        ch.config().setAutoRead(false);
        ch.deregister().addListener(left -> {
            if (!left.isSuccess()) {
                failed(ch, msg, left.cause());
                return;
            }
            home.register(ch).addListener(joined -> {
                if (!joined.isSuccess()) {
                    failed(ch, msg, joined.cause());
                    return;
                }
                if (ch.pipeline().get(idleName) != null) {
                    ch.pipeline().replace(idleName, idleName, idleTimer.get());
                }
                // The context was removed above; it still forwards to the handler after it.
                ctx.fireChannelRead(msg);
                ch.config().setAutoRead(true);
            });
        });
    }

    /**
     * The home loop while the topic is small; past that, the loop with the fewest of its members
     * (the current one on a tie), so a big fan-out ends up even across the loops.
     */
    private EventLoop destination(ClientInfo client, EventLoop current) {
        Route route = client.route();
        TopicKey key = route.topic();
        EventLoop home = homeOf(key);
        Topic topic = topics.get(key);
        if (topic == null || topic.size() < maxMembers) {
            return home;
        }
        return leastLoaded(topic, current);
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

    private static void failed(Channel ch, Object request, Throwable cause) {
        ReferenceCountUtil.release(request);
        log.debug("{} could not move to its topic's event loop; closing", ch, cause);
        ch.close();
    }
}

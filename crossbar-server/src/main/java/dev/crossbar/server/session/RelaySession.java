package dev.crossbar.server.session;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.relay.Member;
import dev.crossbar.core.relay.PreparedFrame;
import dev.crossbar.core.route.Route;
import dev.crossbar.core.route.StreamOptions;
import dev.crossbar.core.stats.ClientIdentity;
import dev.crossbar.core.stats.ConnectionStats;
import dev.crossbar.core.topic.Router;
import dev.crossbar.core.topic.Topic;
import dev.crossbar.core.topic.TopicLimitException;
import dev.crossbar.server.auth.Permit;
import dev.crossbar.server.config.SlowConsumerPolicy;
import dev.crossbar.server.http.HandshakeTimeout;
import dev.crossbar.server.websocket.ClientInfo;
import dev.crossbar.server.websocket.CloseCodes;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.group.ChannelGroup;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrameEncoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler.HandshakeComplete;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One WebSocket connection as a member of its topic: joins when the upgrade completes, hands each
 * whole message to the {@link Router}, writes what the router delivers, leaves when the channel
 * closes.
 *
 * <p>One path per message, both ways. In: each whole message goes to {@link Router#publish}. Out:
 * each message the router delivers goes to this receiver's {@link DeliveryMode}, chosen once when
 * it joins from its stream's rule (live, {@code max-latency}, lossless), which writes it through
 * the {@link Outlet}, queues it, or drops and counts it.
 *
 * <p>Ownership: this is the last inbound handler. A data frame's content is handed to
 * {@link Router#publish}, which takes that reference; anything else that reaches here is released.
 * Delivered frames are borrowed (see {@link Outlet}).
 */
public final class RelaySession extends ChannelInboundHandlerAdapter implements Member {

    private static final Logger log = LoggerFactory.getLogger(RelaySession.class);

    private final Router router;
    private final ChannelGroup sessions;
    private final int maxQueueBytes;
    private final long maxBacklogBytes;
    private final long stallNanos;
    private final SlowConsumerPolicy slowPolicy;
    private final long slowGraceMillis;
    private final int latencySocketBytes;
    private final long backpressureTimeoutNanos;
    private final long maxLosslessBacklogBytes;

    private final ConnectionStats stats = ConnectionStats.startingNow();
    private ChannelHandlerContext ctx;
    private ClientInfo client;
    /** Who this client is, for statistics (set on joining). */
    private ClientIdentity identity;
    private Topic topic;
    /** This connection's keepalive and closing handshake (an earlier handler in the pipeline). */
    private ConnectionLifecycle lifecycle;
    /** What this connection's token allows; null when access control is off. */
    private Permit permit;
    private Outlet outlet;
    /** How this receiver takes what it falls behind on; set on joining. */
    private DeliveryMode mode;
    /** Whether this connection's stream is lossless ({@code slow=backpressure}); read by a drain, any thread. */
    private volatile boolean lossless;
    /**
     * When the socket read that brought the messages now being relayed was handled: one clock read
     * for all the messages of a read, not one each; valid while {@link #readStamped}.
     */
    private long readAtNanos;
    private boolean readStamped;

    /**
     * @param maxQueueBytes   bytes any receiver may have waiting
     * @param maxBacklogBytes bytes a receiver that is still reading may have waiting
     * @param stallNanos      how long without reading makes a receiver stalled
     * @param latencySocketBytes on {@code max-latency} streams: the socket's send buffer
     * @param backpressureTimeoutNanos on {@code slow=backpressure} streams: how long a receiver that holds
     *                        the senders back may read nothing before it is closed
     * @param maxLosslessBacklogBytes on {@code slow=backpressure} streams: bytes a receiver may have
     *                        waiting (messages from other nodes, which arrive while the hold travels)
     */
    public RelaySession(Router router, ChannelGroup sessions, int maxQueueBytes, long maxBacklogBytes, long stallNanos,
                        SlowConsumerPolicy slowPolicy, long slowGraceMillis, int latencySocketBytes,
                        long backpressureTimeoutNanos, long maxLosslessBacklogBytes) {
        this.router = requireNonNull(router, "router");
        this.sessions = requireNonNull(sessions, "sessions");
        this.maxQueueBytes = maxQueueBytes;
        this.maxBacklogBytes = Math.max(maxQueueBytes, maxBacklogBytes);
        this.stallNanos = stallNanos;
        this.slowPolicy = requireNonNull(slowPolicy, "slowPolicy");
        this.slowGraceMillis = slowGraceMillis;
        this.latencySocketBytes = latencySocketBytes;
        this.backpressureTimeoutNanos = backpressureTimeoutNanos;
        this.maxLosslessBacklogBytes = Math.max(maxBacklogBytes, maxLosslessBacklogBytes);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.lifecycle = ConnectionLifecycle.of(ctx.pipeline());
    }

    /** Removed with frames still coalesced: they were never written, so they are released. */
    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (outlet != null) {
            outlet.discard();
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof HandshakeComplete) {
            joined(ctx);
        }
        ctx.fireUserEventTriggered(evt);
    }

    private void joined(ChannelHandlerContext ctx) {
        // hasAttr first: attr() would add an empty attribute to every channel when access control is off.
        permit = ctx.channel().hasAttr(Permit.KEY) ? ctx.channel().attr(Permit.KEY).get() : null;
        if (ctx.pipeline().get(HandshakeTimeout.class) != null) {
            ctx.pipeline().remove(HandshakeTimeout.class);
        }
        client = ctx.channel().attr(ClientInfo.KEY).get();
        if (client == null) {
            // Cannot happen through UpgradeGate; refuse rather than relay to an unknown topic.
            close(WebSocketCloseStatus.INTERNAL_SERVER_ERROR, "no route for this connection");
            return;
        }
        identity = new ClientIdentity(ctx.channel().id().asShortText(), client.remoteAddress(), client.userAgent());
        ChannelHandlerContext out = requireNonNull(ctx.pipeline().context(WebSocketFrameEncoder.class),
                "no WebSocket frame encoder");
        StreamOptions options = router.topics().routing().resolve(client.route().topic());
        lossless = options.lossless();
        boolean paced = client.route().canReceive() && (options.boundsLatency() || options.lossless());
        outlet = new Outlet(out, lifecycle, !paced);
        try {
            topic = router.join(this);
        } catch (TopicLimitException e) {
            // Lost a race with another new topic after the gate admitted us.
            close(CloseCodes.TRY_AGAIN_LATER, e.getMessage());
            return;
        }
        mode = deliveryMode(ctx.channel(), options);
        sessions.add(ctx.channel());
        log.debug("{} joined {} as {}", ctx.channel(), client.route().topic(), client.route().role().label());
    }

    /** The receiver's delivery mode, from its stream's rule. */
    private DeliveryMode deliveryMode(Channel ch, StreamOptions options) {
        if (client.route().canReceive() && options.boundsLatency()) {
            return new LatestDelivery(this, outlet, ch, options, maxBacklogBytes, latencySocketBytes);
        }
        if (client.route().canReceive() && options.lossless()) {
            return new LosslessDelivery(this, outlet, ch, topic.holdBack(), maxQueueBytes, backpressureTimeoutNanos,
                    maxLosslessBacklogBytes);
        }
        return new LiveDelivery(this, outlet, maxQueueBytes, maxBacklogBytes, stallNanos, slowPolicy, slowGraceMillis);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (topic != null && (msg instanceof BinaryWebSocketFrame || msg instanceof TextWebSocketFrame)) {
            if (!readStamped) {
                readAtNanos = System.nanoTime();
                readStamped = true;
            }
            router.publish(this, topic, msg instanceof TextWebSocketFrame, ((ByteBufHolder) msg).content(), ctx.alloc(),
                    readAtNanos);
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        readStamped = false;
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (topic != null) {
            router.leave(this);
            topic = null;
        }
        if (mode != null) {
            mode.end();
        }
        if (outlet != null) {
            outlet.discard();
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (mode != null) {
            mode.writabilityChanged(ctx.channel().isWritable());
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            log.debug("{} connection error: {}", ctx.channel(), cause.toString());
        } else {
            log.warn("{} closing after unexpected error", ctx.channel(), cause);
        }
        ctx.close();
    }

    // ---- Member: called by the router on this channel's event loop ----

    @Override
    public EventExecutor executor() {
        return ctx.executor();
    }

    @Override
    public Route route() {
        return client.route();
    }

    @Override
    public ConnectionStats stats() {
        return stats;
    }

    @Override
    public ClientIdentity client() {
        return identity;
    }

    public Channel channel() {
        return ctx.channel();
    }

    @Override
    public boolean maySend() {
        return permit == null || permit.maySend();
    }

    @Override
    public boolean deliver(PreparedFrame frame) {
        return mayWrite() && mode.deliver(frame);
    }

    /**
     * Its lossless stream lost messages for good: closed with 4010 and the reason, which says how
     * many. It leaves the topic at once, so what it still sends before its socket closes is dropped,
     * not relayed as the start of a stream with a hole in front.
     */
    @Override
    public void streamBroken(String reason) {
        if (topic != null) {
            router.leave(this);
            topic = null;
        }
        close(CloseCodes.MESSAGES_LOST, reason);
    }

    /** A replayed message (what the topic kept for newcomers): written whatever the queue holds. */
    @Override
    public boolean deliverReplay(PreparedFrame frame) {
        if (!mayWrite()) {
            return false;
        }
        stats.recordOut(frame.payloadLength(), frame.publishedAtNanos());
        return outlet.write(frame);
    }

    @Override
    public void flush() {
        outlet.flush();
    }

    /** Stops or resumes reading this client's messages (a lossless stream's receivers are behind). */
    @Override
    public void holdReading(boolean hold) {
        ctx.channel().config().setAutoRead(!hold);
    }

    /**
     * Whether frames may be written now. Closing: nothing may follow the close frame, and nothing
     * refused is counted as sent.
     */
    boolean mayWrite() {
        return ctx.channel().isActive() && !lifecycle.isClosing() && (permit == null || permit.mayReceive());
    }

    /**
     * Whether this connection carries a lossless stream ({@code slow=backpressure}): a drain lets
     * such a transfer finish before closing it. Any thread.
     */
    public boolean lossless() {
        return lossless;
    }

    /**
     * Whether a lossless transfer is still under way here though no message moved: its senders are
     * held back, or messages wait to be sent to this client. Any thread (a drain asks).
     */
    public boolean busy() {
        Topic t = topic;
        dev.crossbar.core.topic.HoldBack hold = t == null ? null : t.holdBack();
        io.netty.channel.ChannelOutboundBuffer pending = ctx.channel().unsafe().outboundBuffer();
        return hold != null && hold.held() || pending != null && pending.totalPendingWriteBytes() > 0;
    }

    /** Starts the closing handshake (see {@link ConnectionLifecycle#close}); deliveries stop now. */
    public void close(WebSocketCloseStatus status, String reason) {
        if (mode != null) {
            mode.end();
        }
        lifecycle.close(status, reason);
    }
}

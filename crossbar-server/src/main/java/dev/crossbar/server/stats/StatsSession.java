package dev.crossbar.server.stats;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.http.HandshakeTimeout;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler.HandshakeComplete;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One stats socket after its upgrade: registers with the {@link StatsService}, turns each text
 * message into a snapshot request. Keepalive and closing are the connection's
 * {@link dev.crossbar.server.websocket.ConnectionLifecycle}, the same as a relay session's.
 *
 * <p>Ownership: the last inbound handler; it releases every message it reads. What it sends is
 * written by the service.
 */
final class StatsSession extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(StatsSession.class);

    private final StatsService service;
    private final StatsFormat format;
    private final StatsScope scope;
    private final ClientDetails details;
    /**
     * Requests queued on the stats thread or waiting for other nodes; past {@link #maxPendingRequests()}
     * further requests are dropped (a reader asks again with the next update).
     */
    final AtomicInteger pendingRequests = new AtomicInteger();
    private Channel channel;

    StatsSession(StatsService service, StatsFormat format, StatsScope scope, ClientDetails details) {
        this.service = requireNonNull(service, "service");
        this.format = requireNonNull(format, "format");
        this.scope = requireNonNull(scope, "scope");
        this.details = requireNonNull(details, "details");
    }

    /**
     * One for a node's own view (a request answers at once; more would only repeat it); a few on a
     * cluster socket, where a reader may have several topics' rows open, each answered after a round.
     */
    int maxPendingRequests() {
        return scope == StatsScope.CLUSTER ? MAX_CLUSTER_REQUESTS : 1;
    }

    /** Topics whose client rows a cluster reader may have asked for at once. */
    static final int MAX_CLUSTER_REQUESTS = 8;

    StatsScope scope() {
        return scope;
    }

    /** How much of each client this socket's reader may see. */
    ClientDetails details() {
        return details;
    }

    Channel channel() {
        return channel;
    }

    StatsFormat format() {
        return format;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof HandshakeComplete) {
            if (ctx.pipeline().get(HandshakeTimeout.class) != null) {
                ctx.pipeline().remove(HandshakeTimeout.class);
            }
            service.attach(this);
            log.debug("{} stats socket open ({}, {}, client details {})", ctx.channel(), format.label(), scope.label(),
                    details.label());
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof TextWebSocketFrame text) {
                // Bounded by the decoder (StatsSocketEndpoint.MAX_REQUEST_BYTES).
                service.request(this, text.text());
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            log.debug("{} stats socket error: {}", ctx.channel(), cause.toString());
        } else {
            log.warn("{} closing stats socket after unexpected error", ctx.channel(), cause);
        }
        ctx.close();
    }
}

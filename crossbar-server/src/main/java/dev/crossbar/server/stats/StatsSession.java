package dev.crossbar.server.stats;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.session.CloseCodes;
import dev.crossbar.server.session.HandshakeTimeout;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler.HandshakeComplete;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One stats socket after its upgrade: registers with the {@link StatsService}, turns each text
 * message into a snapshot request, and keeps the connection alive (ping when quiet, close 1001 when
 * silent too long), as relay sessions do.
 *
 * <p>Ownership: the last inbound handler; it releases every message it reads. What it sends is
 * written by the service.
 */
final class StatsSession extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(StatsSession.class);

    private final StatsService service;
    private final StatsFormat format;
    private final int missedPingsBeforeClose;
    /** Set while a request is queued on the stats thread; further requests until then are coalesced. */
    final AtomicBoolean requestPending = new AtomicBoolean();
    private Channel channel;
    private int idleIntervals;

    StatsSession(StatsService service, StatsFormat format, int missedPingsBeforeClose) {
        this.service = requireNonNull(service, "service");
        this.format = requireNonNull(format, "format");
        this.missedPingsBeforeClose = missedPingsBeforeClose;
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
            log.debug("{} stats socket open ({})", ctx.channel(), format.label());
        } else if (evt instanceof IdleStateEvent idle && idle.state() == IdleState.READER_IDLE) {
            if (++idleIntervals >= missedPingsBeforeClose) {
                ctx.writeAndFlush(new CloseWebSocketFrame(CloseCodes.GOING_AWAY, "idle timeout: nothing heard from the client"))
                        .addListener(ChannelFutureListener.CLOSE);
            } else {
                ctx.writeAndFlush(new PingWebSocketFrame());
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        idleIntervals = 0;
        try {
            if (msg instanceof TextWebSocketFrame) {
                service.request(this);
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

package dev.crossbar.server.tls;

import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a client speaking plain text to the TLS port is told: a complete HTTP 400 saying to use
 * {@code https://} or {@code wss://}, then the connection is closed.
 *
 * <p>Ownership: releases everything it reads.
 */
final class PlainTextRefusal extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(PlainTextRefusal.class);

    private static final String BODY = "400 Bad Request: this port requires TLS; connect with https:// or wss:// here\n";
    /** The whole response. */
    static final String RESPONSE = "HTTP/1.1 400 Bad Request\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: " + BODY.length() + "\r\n"
            + "Connection: close\r\n"
            + "\r\n"
            + BODY;

    private boolean refused;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ReferenceCountUtil.release(msg);
        if (!refused) {
            refused = true;
            log.debug("{} plain text on the TLS port; refusing", ctx.channel());
            ctx.writeAndFlush(ByteBufUtil.writeAscii(ctx.alloc(), RESPONSE)).addListener(ChannelFutureListener.CLOSE);
        }
    }
}

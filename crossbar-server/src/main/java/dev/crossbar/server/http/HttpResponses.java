package dev.crossbar.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;

/** Small, complete HTTP answers; every one closes the connection, since a relay serves few of them. */
public final class HttpResponses {

    private HttpResponses() {
    }

    /** Sends {@code body} as UTF-8 with {@code contentType} and closes the connection after writing. */
    public static void send(ChannelHandlerContext ctx, HttpResponseStatus status, String contentType, String body) {
        ByteBuf content = ByteBufUtil.writeUtf8(ctx.alloc(), body);
        send(ctx, status, contentType, content);
    }

    /** As above with a ready body; takes ownership of {@code content}. */
    public static void send(ChannelHandlerContext ctx, HttpResponseStatus status, String contentType, ByteBuf content) {
        send(ctx, status, contentType, content, EmptyHttpHeaders.INSTANCE);
    }

    /** As above, adding {@code extra} headers (security policy, allowed methods); takes ownership of {@code content}. */
    public static void send(ChannelHandlerContext ctx, HttpResponseStatus status, String contentType, ByteBuf content,
                            HttpHeaders extra) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
        response.headers().add(extra);
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, contentType)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes())
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE)
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }

    /** A plain-text error: status line plus one line saying what was wrong. */
    public static void error(ChannelHandlerContext ctx, HttpResponseStatus status, String reason) {
        send(ctx, status, "text/plain; charset=utf-8", status.code() + " " + status.reasonPhrase() + ": " + reason + "\n");
    }
}

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

/**
 * Small, complete HTTP answers. An answer leaves the connection as the request asked ({@link HttpKeepAlive}
 * keeps it open for the next request or closes it); an error always closes it.
 */
public final class HttpResponses {

    private HttpResponses() {
    }

    /** Sends {@code body} as UTF-8 with {@code contentType}. */
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
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
        ctx.writeAndFlush(response);
    }

    /**
     * A plain-text error: status line plus one line saying what was wrong. Closes the connection
     * after writing: what follows a refused or malformed request is not worth reading.
     */
    public static void error(ChannelHandlerContext ctx, HttpResponseStatus status, String reason) {
        error(ctx, status, reason, EmptyHttpHeaders.INSTANCE);
    }

    /** As above, adding {@code extra} headers (the methods a 405 allows). */
    public static void error(ChannelHandlerContext ctx, HttpResponseStatus status, String reason, HttpHeaders extra) {
        ByteBuf content = ByteBufUtil.writeUtf8(ctx.alloc(),
                status.code() + " " + status.reasonPhrase() + ": " + reason + "\n");
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
        response.headers().add(extra);
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes())
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE)
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
}

package dev.crossbar.server.auth;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;

/**
 * The HTTP answer to a refused token: 401 or 403 with the reason in a one-line plain-text body
 * (as every other refusal of the relay), a {@code WWW-Authenticate} challenge as RFC 6750 section 3
 * asks, and the connection closed. The challenge carries only fixed error codes: the reason may
 * quote the request or the token's claims, which have no place in a header.
 */
final class Refusals {

    private static final String REALM = "Bearer realm=\"crossbar\"";
    /** A close frame's reason is at most 123 bytes of UTF-8 (RFC 6455 section 5.5: 125 less the code). */
    static final int MAX_CLOSE_REASON_BYTES = 123;

    private Refusals() {
    }

    /** {@code reason} cut to fit a close frame, on a character boundary, with an ellipsis when cut. */
    static String closeReason(String reason) {
        if (reason.getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= MAX_CLOSE_REASON_BYTES) {
            return reason;
        }
        StringBuilder b = new StringBuilder();
        int bytes = 3; // the ellipsis
        for (int i = 0; i < reason.length(); ) {
            int cp = reason.codePointAt(i);
            int len = new String(Character.toChars(cp)).getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
            if (bytes + len > MAX_CLOSE_REASON_BYTES) {
                break;
            }
            b.appendCodePoint(cp);
            bytes += len;
            i += Character.charCount(cp);
        }
        return b.append('\u2026').toString();
    }

    static void send(ChannelHandlerContext ctx, AccessDenied denied, boolean tokenPresented) {
        HttpResponseStatus status = denied.status();
        ByteBuf body = ByteBufUtil.writeUtf8(ctx.alloc(),
                status.code() + " " + status.reasonPhrase() + ": " + denied.reason() + "\n");
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
        String challenge = status.code() == AccessDenied.FORBIDDEN.code()
                ? REALM + ", error=\"insufficient_scope\""
                : tokenPresented ? REALM + ", error=\"invalid_token\"" : REALM;
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes())
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE)
                .set(HttpHeaderNames.WWW_AUTHENTICATE, challenge)
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
}

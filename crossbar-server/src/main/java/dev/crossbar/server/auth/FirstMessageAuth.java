package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.crossbar.server.audit.Audit;
import dev.crossbar.server.config.Json;
import dev.crossbar.server.http.HandshakeTimeout;
import dev.crossbar.server.http.RealAddress;
import dev.crossbar.server.websocket.ClientInfo;
import dev.crossbar.server.websocket.CloseCodes;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler.HandshakeComplete;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The original crossbar's way to authorise: the client upgrades without a token, and its first
 * message (text or binary) is the token. The relay answers with one JSON text message,
 * {@code {"topic":"/in/cam","authorised":true,"reason":"ok"}}, before any relayed data; refused,
 * it answers {@code "authorised":false} with the reason and closes 1008. The connection joins its
 * topic only once authorised, so it receives nothing before. A client that sends no token within
 * the timeout gets the same refusal.
 *
 * <p>Unlike the original, the reply does not echo the token back (it would put a credential into
 * whatever logs the client's messages), and a refused client is closed with a close frame rather
 * than after a 50 ms pause.
 *
 * <p>Ownership: the token message is consumed and released here; after a refusal, whatever else
 * arrives is released; once authorised, this handler leaves the pipeline and messages flow on.
 */
final class FirstMessageAuth extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(FirstMessageAuth.class);

    /** The reply's reason when the token is accepted, as in the original crossbar. */
    static final String OK = "ok";

    private final AccessControl access;
    private final long timeoutMillis;
    private Object handshake;
    private ScheduledFuture<?> timer;
    private boolean authorised;
    private boolean refused;

    FirstMessageAuth(AccessControl access, long timeoutMillis) {
        this.access = requireNonNull(access, "access");
        this.timeoutMillis = timeoutMillis;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (!(evt instanceof HandshakeComplete)) {
            ctx.fireUserEventTriggered(evt);
            return;
        }
        if (authorised) {
            passOn(ctx, evt);
            return;
        }
        // Hold the handshake (the session joins when it sees it) until the token is accepted. The
        // token timeout replaces the upgrade timeout, which would close without a reason.
        handshake = evt;
        if (ctx.pipeline().get(HandshakeTimeout.class) != null) {
            ctx.pipeline().remove(HandshakeTimeout.class);
        }
        timer = ctx.executor().schedule(() -> {
            timer = null;
            if (!authorised && !refused) {
                refuse(ctx, AccessDenied.unauthenticated("no token within " + timeoutMillis + " ms"));
            }
        }, timeoutMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (refused) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (authorised || !(msg instanceof TextWebSocketFrame || msg instanceof BinaryWebSocketFrame)) {
            ctx.fireChannelRead(msg);
            return;
        }
        String token;
        try {
            ByteBuf content = ((io.netty.buffer.ByteBufHolder) msg).content();
            if (content.readableBytes() > TokenVerifier.MAX_TOKEN_CHARS) {
                refuse(ctx, AccessDenied.unauthenticated("token too long: " + content.readableBytes()
                        + " bytes (expected: <= " + TokenVerifier.MAX_TOKEN_CHARS + ")"));
                return;
            }
            token = content.toString(StandardCharsets.UTF_8);
        } finally {
            ReferenceCountUtil.release(msg);
        }
        ClientInfo client = ctx.channel().attr(ClientInfo.KEY).get();
        try {
            Grant grant = access.grantFor(token, client.route());
            ctx.channel().attr(Permit.KEY).set(new Permit(grant));
        } catch (AccessDenied denied) {
            refuse(ctx, denied);
            return;
        }
        authorised = true;
        cancelTimer();
        ctx.writeAndFlush(new TextWebSocketFrame(reply(client.route().path(), true, OK)));
        if (handshake != null) {
            passOn(ctx, handshake);
        }
    }

    private void passOn(ChannelHandlerContext ctx, Object evt) {
        handshake = null;
        ctx.pipeline().remove(this);
        ctx.fireUserEventTriggered(evt);
    }

    private void refuse(ChannelHandlerContext ctx, AccessDenied denied) {
        refused = true;
        cancelTimer();
        access.recordRefusal(denied);
        ClientInfo client = ctx.channel().attr(ClientInfo.KEY).get();
        String path = client == null ? "" : client.route().path();
        Audit.event("refused").address(RealAddress.of(ctx.channel())).topic(path)
                .role(client == null ? null : client.route().role().label())
                .code(CloseCodes.POLICY_VIOLATION.code()).reason(denied.reason()).log();
        if (log.isDebugEnabled()) {
            log.debug("{} refused first-message token for {}: {}", ctx.channel(), path, denied.reason());
        }
        ctx.write(new TextWebSocketFrame(reply(path, false, denied.reason())));
        ConnectionLifecycle.of(ctx.pipeline()).close(CloseCodes.POLICY_VIOLATION, Refusals.closeReason(denied.reason()));
    }

    /** The JSON reply, keys in the original's order: topic, authorised, reason. */
    static String reply(String topic, boolean authorised, String reason) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("topic", topic);
        m.put("authorised", authorised);
        m.put("reason", reason);
        try {
            return Json.MAPPER.writeValueAsString(m);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("strings and a boolean are JSON", e);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        cancelTimer();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        cancelTimer();
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}

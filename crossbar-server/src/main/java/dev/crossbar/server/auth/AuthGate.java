package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.audit.Audit;
import dev.crossbar.server.http.RealAddress;
import dev.crossbar.server.websocket.ClientInfo;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks the token of a WebSocket upgrade before the handshake: the upgrade gate has already
 * accepted the route, so this decides only whether this client may have it. A valid token becomes
 * the connection's {@link Permit}; a missing or invalid one is answered 401, one for another route
 * or scope 403, with a reason and no WebSocket. Without a token in first-message mode, the upgrade
 * goes ahead and {@link FirstMessageAuth} waits for the token.
 *
 * <p>Ownership: releases every request it refuses; an accepted one is passed on (with its
 * reference) to the handshake, and this handler leaves the pipeline. After a refusal, anything
 * more that arrives on the closing connection is released.
 */
public final class AuthGate extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(AuthGate.class);

    private final AccessControl access;
    private final long firstMessageTimeoutMillis;
    private boolean refused;

    /** @param firstMessageTimeoutMillis how long a client in first-message mode has to send its token */
    public AuthGate(AccessControl access, long firstMessageTimeoutMillis) {
        this.access = requireNonNull(access, "access");
        this.firstMessageTimeoutMillis = firstMessageTimeoutMillis;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (refused) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (!(msg instanceof FullHttpRequest request)) {
            ctx.fireChannelRead(msg);
            return;
        }
        ClientInfo client = ctx.channel().attr(ClientInfo.KEY).get();
        String token = null;
        try {
            if (client == null) {
                // Cannot happen behind the upgrade gate; refuse rather than let an unchecked upgrade through.
                throw AccessDenied.forbidden("no route for this request");
            }
            token = Bearer.from(request);
            if (token == null && access.config().firstMessage()) {
                ctx.pipeline().addBefore(ctx.pipeline().context(AccessEnforcer.class).name(), "first-message-auth",
                        new FirstMessageAuth(access, firstMessageTimeoutMillis));
            } else if (token == null) {
                throw AccessDenied.unauthenticated("missing token (expected: Authorization: Bearer <jwt> or ?"
                        + Bearer.QUERY_PARAMETER + "=<jwt>)");
            } else {
                ctx.channel().attr(Permit.KEY).set(new Permit(access.grantFor(token, client.route())));
            }
        } catch (AccessDenied denied) {
            refused = true;
            access.recordRefusal(denied);
            Audit.event("refused").address(RealAddress.of(ctx.channel()))
                    .topic(client == null ? null : client.route().path())
                    .role(client == null ? null : client.route().role().label())
                    .code(denied.status().code()).reason(denied.reason()).log();
            if (log.isDebugEnabled()) {
                log.debug("{} refused {}: {}", ctx.channel(), client == null ? "?" : client.route().path(), denied.reason());
            }
            request.release();
            Refusals.send(ctx, denied, token != null);
            return;
        }
        ctx.pipeline().remove(this);
        ctx.fireChannelRead(request);
    }
}

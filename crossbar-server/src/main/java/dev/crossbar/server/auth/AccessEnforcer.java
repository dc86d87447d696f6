package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.audit.Audit;
import dev.crossbar.server.http.RealAddress;
import dev.crossbar.server.websocket.CloseCodes;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler.HandshakeComplete;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds a connection to its {@link Permit} once it is upgraded: lets the session join only with a
 * permit that is not revoked, and ends the permit (no more relaying either way, then close 1008
 * with a reason) when the token expires or is revoked. The expiry timer runs on the channel's
 * event loop and is cancelled when the channel closes.
 *
 * <p>Ownership: passes every message on untouched, except after the permit has ended, when it
 * releases what still arrives.
 */
public final class AccessEnforcer extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(AccessEnforcer.class);

    /** Close reason when the token's {@code exp} (plus the clock skew) passes. */
    public static final String EXPIRED = "token expired";
    /** Close reason when the token (its {@code jti} or {@code sid}) is revoked. */
    public static final String REVOKED = "token revoked";

    private final AccessControl access;
    private Permit permit;
    private ScheduledFuture<?> expiry;

    public AccessEnforcer(AccessControl access) {
        this.access = requireNonNull(access, "access");
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof HandshakeComplete) {
            admit(ctx, evt);
        } else if (evt instanceof AccessEnded ended) {
            end(ctx, ended.reason(), ended.revoked());
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }

    /** Passes the handshake on to the session only for a live permit, and starts its expiry timer. */
    private void admit(ChannelHandlerContext ctx, Object handshake) {
        permit = ctx.channel().attr(Permit.KEY).get();
        if (permit == null) {
            // Cannot happen: the gate or first-message auth sets a permit before the handshake gets here.
            ConnectionLifecycle.of(ctx.pipeline()).close(CloseCodes.POLICY_VIOLATION, "not authorised");
            return;
        }
        Grant grant = permit.grant();
        if (access.revocations().isRevoked(grant.jti(), grant.sid(), System.currentTimeMillis())) {
            // Revoked between the gate's check and now; the revocation sweep may have missed us.
            end(ctx, REVOKED, true);
            return;
        }
        scheduleExpiry(ctx);
        if (!permit.ended()) {
            ctx.fireUserEventTriggered(handshake);
        }
    }

    private void scheduleExpiry(ChannelHandlerContext ctx) {
        long delay = permit.grant().expiresAtMillis() - System.currentTimeMillis();
        if (delay <= 0) {
            end(ctx, EXPIRED, false);
            return;
        }
        // Re-checked on firing: the wall clock may have been stepped while the timer, which runs on
        // the monotonic clock, waited.
        expiry = ctx.executor().schedule(() -> {
            expiry = null;
            scheduleExpiry(ctx);
        }, delay, TimeUnit.MILLISECONDS);
    }

    private void end(ChannelHandlerContext ctx, String reason, boolean revoked) {
        if (permit == null || permit.ended()) {
            return;
        }
        permit.end();
        cancelExpiry();
        access.recordEnded(revoked);
        Audit.event(revoked ? "revoked" : "expired").field("connection", ctx.channel().id().asShortText())
                .address(RealAddress.of(ctx.channel())).sub(permit.grant().sub()).jti(permit.grant().jti())
                .topic(permit.grant().path()).reason(reason).log();
        if (log.isDebugEnabled()) {
            log.debug("{} {} on {} (exp {}); closing", ctx.channel(), reason, permit.grant().path(),
                    Instant.ofEpochMilli(permit.grant().expiresAtMillis()));
        }
        ConnectionLifecycle.of(ctx.pipeline()).close(CloseCodes.POLICY_VIOLATION, Refusals.closeReason(reason));
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (permit != null && permit.ended()) {
            ReferenceCountUtil.release(msg);
            return;
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        cancelExpiry();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        cancelExpiry();
    }

    private void cancelExpiry() {
        if (expiry != null) {
            expiry.cancel(false);
            expiry = null;
        }
    }
}

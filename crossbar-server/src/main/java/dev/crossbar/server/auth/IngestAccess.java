package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.audit.Audit;
import dev.crossbar.server.http.RealAddress;
import dev.crossbar.server.websocket.ClientInfo;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The token check of an HTTP ingest request, and its hold on the stream while the body lasts: the
 * same decision as for a WebSocket publisher on that route ({@link AccessControl#grantFor}), from
 * an {@code Authorization: Bearer} header or a {@code ?token=} parameter (no first-message mode: a
 * body has no first message). A refusal is 401 or 403 with a reason, as for an upgrade. Admitted,
 * the request goes on with its {@link Permit}; when the token expires or is revoked before the body
 * ends, the poster is answered 401 with the reason and the connection closes.
 *
 * <p>Ownership: passes every message on untouched until access ends (refused, expired, revoked);
 * from then on it releases what still arrives.
 */
public final class IngestAccess extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(IngestAccess.class);

    private final AccessControl access;
    private Permit permit;
    private ScheduledFuture<?> expiry;
    /** The body has passed whole: its answer is the publisher's, whatever happens to the token now. */
    private boolean bodyEnded;
    private boolean ended;

    public IngestAccess(AccessControl access) {
        this.access = requireNonNull(access, "access");
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (ended) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpRequest request && permit == null) {
            admit(ctx, request);
            return;
        }
        if (msg instanceof LastHttpContent) {
            bodyEnded = true;
            cancelExpiry();
        }
        ctx.fireChannelRead(msg);
    }

    private void admit(ChannelHandlerContext ctx, HttpRequest request) {
        ClientInfo client = ctx.channel().attr(ClientInfo.KEY).get();
        String token = null;
        try {
            if (client == null) {
                // Cannot happen behind the ingest gate; refuse rather than let an unchecked body through.
                throw AccessDenied.forbidden("no route for this request");
            }
            token = Bearer.from(request);
            if (token == null) {
                throw AccessDenied.unauthenticated("missing token (expected: Authorization: Bearer <jwt> or ?"
                        + Bearer.QUERY_PARAMETER + "=<jwt>)");
            }
            permit = new Permit(access.grantFor(token, client.route()));
        } catch (AccessDenied denied) {
            ended = true;
            access.recordRefusal(denied);
            Audit.event("refused").address(RealAddress.of(ctx.channel()))
                    .topic(client == null ? null : client.route().path())
                    .role(client == null ? null : client.route().role().label())
                    .code(denied.status().code()).reason(denied.reason()).log();
            if (log.isDebugEnabled()) {
                log.debug("{} ingest refused {}: {}", ctx.channel(), client == null ? "?" : client.route().path(),
                        denied.reason());
            }
            ReferenceCountUtil.release(request);
            Refusals.send(ctx, denied, token != null);
            return;
        }
        ctx.channel().attr(Permit.KEY).set(permit);
        scheduleExpiry(ctx);
        if (!ended) {
            ctx.fireChannelRead(request);
        }
    }

    private void scheduleExpiry(ChannelHandlerContext ctx) {
        long delay = permit.grant().expiresAtMillis() - System.currentTimeMillis();
        if (delay <= 0) {
            end(ctx, AccessEnforcer.EXPIRED, false);
            return;
        }
        // Re-checked on firing: the wall clock may have been stepped while the timer waited.
        expiry = ctx.executor().schedule(() -> {
            expiry = null;
            scheduleExpiry(ctx);
        }, delay, TimeUnit.MILLISECONDS);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof AccessEnded e) {
            end(ctx, e.reason(), e.revoked());
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }

    /** The token ran out or was revoked while the body was still coming: 401 with the reason, and close. */
    private void end(ChannelHandlerContext ctx, String reason, boolean revoked) {
        if (permit == null || ended || bodyEnded) {
            return;
        }
        ended = true;
        permit.end();
        cancelExpiry();
        access.recordEnded(revoked);
        Audit.event(revoked ? "revoked" : "expired").field("connection", ctx.channel().id().asShortText())
                .address(RealAddress.of(ctx.channel())).sub(permit.grant().sub()).jti(permit.grant().jti())
                .topic(permit.grant().path()).reason(reason).log();
        log.debug("{} ingest on {}: {}; closing", ctx.channel(), permit.grant().path(), reason);
        Refusals.send(ctx, AccessDenied.unauthenticated(reason), true);
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

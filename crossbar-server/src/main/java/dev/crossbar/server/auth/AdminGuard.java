package dev.crossbar.server.auth;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.audit.Audit;
import dev.crossbar.server.http.RealAddress;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lets a request reach a protected reserved path (e.g. {@code /stats}, {@code /ws},
 * {@code /metrics} under {@code --stats-require-admin}) only with an admin token, by header or
 * {@code ?token=}; otherwise answers 401/403 itself. Placed before the upgrade gate, so it covers a
 * protected path whether the gate serves it as an HTTP endpoint or as a WebSocket, and whichever
 * endpoints exist. Every request is checked (never only the first): a client may pipeline several.
 *
 * <p>Stateless, so one instance serves every channel. Ownership: releases a request it refuses;
 * passes everything else on untouched.
 */
@Sharable
public final class AdminGuard extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(AdminGuard.class);

    private final AccessControl access;
    private final Set<String> paths;

    public AdminGuard(AccessControl access, Set<String> paths) {
        this.access = requireNonNull(access, "access");
        this.paths = Set.copyOf(paths);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof FullHttpRequest request && isProtected(request)) {
            try {
                check(request, access);
            } catch (AccessDenied denied) {
                access.recordRefusal(denied);
                Audit.event("refused").address(RealAddress.of(ctx.channel())).topic(request.uri().split("\\?", 2)[0])
                        .role("admin").code(denied.status().code()).reason(denied.reason()).log();
                if (log.isDebugEnabled()) {
                    log.debug("{} refused admin path {}: {}", ctx.channel(), request.uri().split("\\?", 2)[0], denied.reason());
                }
                request.release();
                Refusals.send(ctx, denied, true);
                return;
            }
        }
        ctx.fireChannelRead(msg);
    }

    /**
     * The reusable check: passes if {@code request} carries an admin token.
     *
     * @throws AccessDenied 401 without a valid token, 403 without the admin scope
     */
    public static void check(HttpRequest request, AccessControl access) throws AccessDenied {
        String token = Bearer.from(request);
        if (token == null) {
            throw AccessDenied.unauthenticated("missing admin token (expected: Authorization: Bearer <jwt> or ?"
                    + Bearer.QUERY_PARAMETER + "=<jwt>)");
        }
        access.checkAdmin(token);
    }

    /** Whether {@code request} carries a valid admin token (what {@link #check} demands), without refusing it. */
    public static boolean holdsAdmin(HttpRequest request, AccessControl access) {
        try {
            check(request, access);
            return true;
        } catch (AccessDenied denied) {
            return false;
        }
    }

    private boolean isProtected(HttpRequest request) {
        String path;
        try {
            path = new QueryStringDecoder(request.uri()).path();
        } catch (IllegalArgumentException e) {
            return false; // the upgrade gate refuses it (400)
        }
        return paths.contains(normalise(path));
    }

    /**
     * Folds runs of slashes and drops a trailing one: stricter than the gate's own lookup, so no
     * spelling of a protected path slips past this check and still reaches its endpoint.
     */
    static String normalise(String path) {
        String p = path.replaceAll("/{2,}", "/");
        return p.length() > 1 && p.endsWith("/") ? p.substring(0, p.length() - 1) : p;
    }
}

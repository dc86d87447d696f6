package dev.crossbar.server.auth;

import dev.crossbar.server.audit.Audit;
import dev.crossbar.server.http.RealAddress;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpRequest;
import java.net.InetSocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may act as the administrator ({@code POST /admin/...}): with tokens on, a request carrying a
 * token with the admin scope; with tokens off, a request from this host (the loopback address:
 * {@code systemctl reload}, a local {@code curl}), since there is no one else to trust.
 */
public final class AdminAuthority {

    private static final Logger log = LoggerFactory.getLogger(AdminAuthority.class);

    /** Access control, or null when tokens are off. */
    private final AccessControl access;

    public AdminAuthority(AccessControl access) {
        this.access = access;
    }

    /**
     * Whether {@code request} may act as the administrator; if not, it has been answered (401 or
     * 403 with the reason, the connection closed). The request is borrowed.
     */
    public boolean permits(ChannelHandlerContext ctx, HttpRequest request) {
        try {
            check(ctx, request);
            return true;
        } catch (AccessDenied denied) {
            if (access != null) {
                access.recordRefusal(denied);
            }
            log.debug("{} refused administrator action {}: {}", ctx.channel(), request.uri(), denied.reason());
            Audit.event("refused").address(RealAddress.of(ctx.channel())).topic(request.uri().split("\\?", 2)[0])
                    .role("admin").code(denied.status().code()).reason(denied.reason()).log();
            Refusals.send(ctx, denied, access != null && denied.status().code() == AccessDenied.FORBIDDEN.code());
            return false;
        }
    }

    private void check(ChannelHandlerContext ctx, HttpRequest request) throws AccessDenied {
        if (access != null) {
            AdminGuard.check(request, access);
            return;
        }
        if (!(ctx.channel().remoteAddress() instanceof InetSocketAddress peer) || peer.getAddress() == null
                || !peer.getAddress().isLoopbackAddress()) {
            throw AccessDenied.forbidden("tokens are off: administrator actions are taken only from this host "
                    + "(loopback), or with an admin token once an --auth-* key is set");
        }
    }
}

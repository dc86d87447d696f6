package dev.crossbar.server.admin;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.auth.AdminAuthority;
import dev.crossbar.server.http.HttpEndpoint;
import dev.crossbar.server.http.HttpResponses;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.function.IntSupplier;

/**
 * {@code POST /admin/drain}: starts draining the node before a restart (new connections refused,
 * {@code /healthz} draining, clients closed with 1012, lossless streams let finish), after which the
 * relay stops. Answers 202 at once with how many clients were connected; a second call changes
 * nothing. Ownership: the request is borrowed.
 */
public final class DrainEndpoint implements HttpEndpoint {

    public static final String PATH = "/admin/drain";

    private final AdminAuthority authority;
    /** Starts the drain (once) and says how many clients there were. */
    private final IntSupplier start;

    public DrainEndpoint(AdminAuthority authority, IntSupplier start) {
        this.authority = requireNonNull(authority, "authority");
        this.start = requireNonNull(start, "start");
    }

    @Override
    public void handle(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (!authority.permits(ctx, request)) {
            return;
        }
        if (!HttpMethod.POST.equals(request.method())) {
            HttpResponses.error(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "use POST to drain this node");
            return;
        }
        int clients = start.getAsInt();
        HttpResponses.send(ctx, HttpResponseStatus.ACCEPTED, "application/json",
                "{\"draining\":true,\"clients\":" + clients + "}\n");
    }
}

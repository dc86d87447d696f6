package dev.crossbar.server.http;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * {@code /healthz}: 200 {@code ok} while the relay is serving; 503 {@code degraded: <why>} while an
 * event loop has stopped moving messages (its liveness probe is overdue: which loop, since when) or
 * a part the relay depends on (the cluster link) is down; 503 {@code draining} while the node drains
 * before a restart. Holds no per-channel state, so one instance serves every channel.
 */
public final class HealthEndpoint implements HttpEndpoint {

    public static final String PATH = "/healthz";
    /** A node on its own: always healthy while it answers. */
    public static final HealthEndpoint INSTANCE = new HealthEndpoint(() -> null, () -> false);

    /** Answer while degraded: "take this node out of rotation", not "restart it". */
    static final HttpResponseStatus DEGRADED = HttpResponseStatus.SERVICE_UNAVAILABLE;

    /** The healthy answer's body, encoded once: it is what a load balancer asks for most. */
    private static final ByteBuf OK_BODY = Unpooled.unreleasableBuffer(
            Unpooled.directBuffer(3).writeBytes("ok\n".getBytes(StandardCharsets.US_ASCII)).asReadOnly());

    private final Supplier<String> degradedReason;
    private final BooleanSupplier draining;

    /**
     * @param degradedReason null while healthy, otherwise one line saying what is wrong
     * @param draining       whether the node is draining before a restart
     */
    public HealthEndpoint(Supplier<String> degradedReason, BooleanSupplier draining) {
        this.degradedReason = requireNonNull(degradedReason, "degradedReason");
        this.draining = requireNonNull(draining, "draining");
    }

    @Override
    public void handle(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (draining.getAsBoolean()) {
            HttpResponses.send(ctx, DEGRADED, "text/plain; charset=utf-8", "draining: this node is about to restart\n");
            return;
        }
        String reason = degradedReason.get();
        if (reason == null) {
            HttpResponses.send(ctx, HttpResponseStatus.OK, "text/plain; charset=utf-8", OK_BODY.duplicate());
        } else {
            HttpResponses.send(ctx, DEGRADED, "text/plain; charset=utf-8", "degraded: " + reason + "\n");
        }
    }
}

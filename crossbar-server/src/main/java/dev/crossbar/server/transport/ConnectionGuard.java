package dev.crossbar.server.transport;

import dev.crossbar.server.http.HandshakeFailures.Reason;
import dev.crossbar.server.http.Refused;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * Holds this channel's place in the {@link ConnectionLimiter} from connect to close. A connection
 * over a limit is not closed at once: it is marked {@link Refused}, so the HTTP gate can answer its
 * request with 503 or 429 and a reason (closing unread would make the client see a reset instead).
 * The handshake timeout bounds how long a refused connection can linger.
 */
public final class ConnectionGuard extends ChannelInboundHandlerAdapter {

    private final ConnectionLimiter limiter;
    private InetAddress acquired;

    public ConnectionGuard(ConnectionLimiter limiter) {
        this.limiter = limiter;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (ctx.channel().remoteAddress() instanceof InetSocketAddress remote && remote.getAddress() != null) {
            ConnectionLimiter.Refusal refusal = limiter.tryAcquire(remote.getAddress());
            if (refusal == null) {
                acquired = remote.getAddress();
            } else {
                ctx.channel().attr(Refused.KEY).set(switch (refusal) {
                    case TOO_MANY_CONNECTIONS -> new Refused(HttpResponseStatus.SERVICE_UNAVAILABLE,
                            Reason.TOO_MANY_CONNECTIONS, "the relay is at its connection limit; try again later");
                    case TOO_MANY_FROM_ADDRESS -> new Refused(HttpResponseStatus.TOO_MANY_REQUESTS,
                            Reason.TOO_MANY_FROM_ADDRESS, "too many connections from your address");
                });
            }
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (acquired != null) {
            limiter.release(acquired);
            acquired = null;
        }
        ctx.fireChannelInactive();
    }
}

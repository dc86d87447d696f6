package dev.crossbar.server.transport;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.http.HandshakeFailures.Reason;
import dev.crossbar.server.http.Refused;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * Takes this channel's place in the {@link ConnectionLimiter} when it connects and gives it back
 * when it closes. A connection over a limit is not closed at once: it is marked {@link Refused}, so
 * the HTTP gate can answer its request with 503 or 429 and a reason (closing unread would make the
 * client see a reset instead). The handshake timeout bounds how long a refused connection can linger.
 *
 * <p>One instance serves every channel, and it leaves each pipeline once the channel is active
 * (the release is a close listener): an idle relay holding thousands of connections carries no
 * handler context for it.
 */
@Sharable
public final class ConnectionGuard extends ChannelInboundHandlerAdapter {

    private final ConnectionLimiter limiter;

    public ConnectionGuard(ConnectionLimiter limiter) {
        this.limiter = requireNonNull(limiter, "limiter");
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        Channel ch = ctx.channel();
        if (ch.remoteAddress() instanceof InetSocketAddress remote && remote.getAddress() != null) {
            InetAddress address = remote.getAddress();
            ConnectionLimiter.Refusal refusal = limiter.tryAcquire(address);
            if (refusal == null) {
                ch.closeFuture().addListener(f -> limiter.release(address));
            } else {
                ch.attr(Refused.KEY).set(switch (refusal) {
                    case TOO_MANY_CONNECTIONS -> new Refused(HttpResponseStatus.SERVICE_UNAVAILABLE,
                            Reason.TOO_MANY_CONNECTIONS, "the relay is at its connection limit; try again later");
                    case TOO_MANY_FROM_ADDRESS -> new Refused(HttpResponseStatus.TOO_MANY_REQUESTS,
                            Reason.TOO_MANY_FROM_ADDRESS, "too many connections from your address");
                });
            }
        }
        ctx.pipeline().remove(this);
        ctx.fireChannelActive();
    }
}

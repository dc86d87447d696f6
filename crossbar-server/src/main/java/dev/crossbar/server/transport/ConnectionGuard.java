package dev.crossbar.server.transport;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.http.Refused;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.net.InetSocketAddress;

/**
 * Takes this channel's place in the {@link ConnectionLimiter} when it connects and gives it back
 * when it closes: its place among all connections, and, when the socket's peer is the client, its
 * place among its address's ({@link AddressAdmission}). Behind a trusted proxy the address's part
 * waits until the proxy has said who the client is ({@link ProxyHeader}, {@link ForwardedClient}).
 * A connection over a limit is not closed at once: it is marked {@link Refused}, so the HTTP gate
 * can answer its request with 503 or 429 and a reason (closing unread would make the client see a
 * reset instead). The handshake timeout bounds how long a refused connection can linger.
 *
 * <p>Two instances serve every channel (the peer is the client, or a proxy will say), and each
 * leaves the pipeline once the channel is active (the release is a close listener): an idle relay
 * holding thousands of connections carries no handler context for it.
 */
@Sharable
public final class ConnectionGuard extends ChannelInboundHandlerAdapter {

    private final AddressAdmission admission;
    private final boolean peerIsClient;

    /** @param peerIsClient whether the socket's peer is the client (no proxy will report another address) */
    ConnectionGuard(AddressAdmission admission, boolean peerIsClient) {
        this.admission = requireNonNull(admission, "admission");
        this.peerIsClient = peerIsClient;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        Channel ch = ctx.channel();
        if (ch.remoteAddress() instanceof InetSocketAddress remote && remote.getAddress() != null) {
            ConnectionLimiter limiter = admission.limiter();
            ConnectionLimiter.Refusal refusal = limiter.tryAcquireTotal();
            if (refusal == null) {
                ch.closeFuture().addListener(f -> limiter.releaseTotal());
                if (peerIsClient) {
                    admission.admit(ch, remote.getAddress());
                }
            } else {
                AddressAdmission.refuse(ch, refusal);
            }
        }
        ctx.pipeline().remove(this);
        ctx.fireChannelActive();
    }
}

package dev.crossbar.server.transport;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.config.TrustedProxies;
import dev.crossbar.server.http.ForwardedAddress;
import dev.crossbar.server.http.RealAddress;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpRequest;
import java.net.InetSocketAddress;

/**
 * On a connection from a trusted proxy ({@code --trusted-proxies}) without the PROXY protocol: takes
 * the client's address from the first request's {@code Forwarded} or {@code X-Forwarded-For}
 * header ({@link ForwardedAddress}), makes it the connection's {@link RealAddress}, and admits the
 * connection from that address ({@link AddressAdmission}), before the ingest and upgrade gates
 * read the request (it reads the request's head only, so an HTTP ingest's body never waits for it). A WebSocket connection carries one request; later requests on a kept-alive plain HTTP
 * connection keep the first one's address.
 *
 * <p>Ownership: passes every message on untouched; leaves the pipeline after the first request.
 */
final class ForwardedClient extends ChannelInboundHandlerAdapter {

    private final TrustedProxies trusted;
    private final AddressAdmission admission;

    ForwardedClient(TrustedProxies trusted, AddressAdmission admission) {
        this.trusted = requireNonNull(trusted, "trusted");
        this.admission = requireNonNull(admission, "admission");
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest request && ctx.channel().remoteAddress() instanceof InetSocketAddress peer) {
            InetSocketAddress client = ForwardedAddress.client(peer, request.headers(), trusted);
            if (!client.equals(peer)) {
                ctx.channel().attr(RealAddress.KEY).set(client);
            }
            admission.admit(ctx.channel(), client.getAddress());
            ctx.pipeline().remove(this);
        }
        ctx.fireChannelRead(msg);
    }
}

package dev.crossbar.server.transport;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.config.TrustedProxies;
import dev.crossbar.server.http.RealAddress;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.haproxy.HAProxyCommand;
import io.netty.handler.codec.haproxy.HAProxyMessage;
import io.netty.handler.codec.haproxy.HAProxyProtocolException;
import io.netty.util.NetUtil;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --proxy-protocol}: reads the PROXY protocol header (v1 text or v2 binary, decoded by
 * Netty's {@code HAProxyMessageDecoder} just before this handler) that a load balancer sends ahead
 * of the client's bytes, and makes its source address the connection's {@link RealAddress}, then
 * admits the connection from that address ({@link AddressAdmission}). Only a trusted proxy may send
 * one: a connection from anyone else, or one that does not start with a valid header, is closed.
 * A {@code LOCAL} header (the balancer's own health check) leaves the peer as the address.
 *
 * <p>Ownership: releases the header message; leaves the pipeline after it, so everything after
 * flows on untouched.
 */
final class ProxyHeader extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(ProxyHeader.class);

    private final TrustedProxies trusted;
    private final AddressAdmission admission;

    ProxyHeader(TrustedProxies trusted, AddressAdmission admission) {
        this.trusted = requireNonNull(trusted, "trusted");
        this.admission = requireNonNull(admission, "admission");
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        InetSocketAddress peer = (InetSocketAddress) ctx.channel().remoteAddress();
        if (peer == null || !trusted.trusts(peer.getAddress())) {
            log.debug("{} PROXY protocol expected from a trusted proxy, not {}; closing", ctx.channel(), peer);
            ctx.close();
            return;
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof HAProxyMessage header)) {
            ctx.fireChannelRead(msg);
            return;
        }
        InetSocketAddress client = null;
        try {
            if (header.command() == HAProxyCommand.PROXY && header.sourceAddress() != null) {
                InetAddress a = NetUtil.createInetAddressFromIpAddressString(header.sourceAddress());
                if (a != null) {
                    client = new InetSocketAddress(a, header.sourcePort());
                }
            }
        } finally {
            header.release();
        }
        if (client != null) {
            ctx.channel().attr(RealAddress.KEY).set(client);
        }
        InetSocketAddress real = RealAddress.of(ctx.channel());
        if (real != null && real.getAddress() != null) {
            admission.admit(ctx.channel(), real.getAddress());
        }
        ctx.pipeline().remove(this);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof HAProxyProtocolException || cause.getCause() instanceof HAProxyProtocolException) {
            log.debug("{} no valid PROXY protocol header ({}); closing", ctx.channel(), cause.getMessage());
            ctx.close();
            return;
        }
        ctx.fireExceptionCaught(cause);
    }
}

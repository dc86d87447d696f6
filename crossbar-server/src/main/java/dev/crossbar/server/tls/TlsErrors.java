package dev.crossbar.server.tls;

import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sits right after the SslHandler and turns TLS failures (a client that does not trust the
 * certificate, a scanner, a handshake cut short) into one DEBUG line and a closed connection: they
 * are the peer's problem, like a reset, and must not reach the session's error log with a stack.
 *
 * <p>Stateless, so one instance serves every channel; passes every message on untouched.
 */
@Sharable
public final class TlsErrors extends ChannelInboundHandlerAdapter {

    public static final TlsErrors INSTANCE = new TlsErrors();

    private static final Logger log = LoggerFactory.getLogger(TlsErrors.class);

    private TlsErrors() {
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable tls = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (tls instanceof SSLException) {
            log.debug("{} TLS failure: {}", ctx.channel(), tls.toString());
            ctx.close();
            return;
        }
        ctx.fireExceptionCaught(cause);
    }
}

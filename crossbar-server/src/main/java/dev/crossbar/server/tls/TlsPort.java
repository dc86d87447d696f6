package dev.crossbar.server.tls;

import static java.util.Objects.requireNonNull;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.OptionalSslHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import java.util.function.Supplier;

/**
 * The first handler on a TLS port, Netty's {@link OptionalSslHandler} with two choices of ours: a
 * TLS client gets an {@link SslHandler} from the certificate current at that moment (so a reloaded
 * certificate serves new connections), and a client speaking plain HTTP or WebSocket to the port
 * gets a plain-text 400 ({@link PlainTextRefusal}) instead of a TLS alert it cannot read.
 *
 * <p>Ownership: Netty's handler passes the bytes it looked at to whichever handler replaces it.
 */
public final class TlsPort extends OptionalSslHandler {

    /** The pipeline name the SslHandler takes. */
    public static final String SSL_HANDLER_NAME = "tls";

    private final Supplier<SslContext> context;

    public TlsPort(Supplier<SslContext> context) {
        super(requireNonNull(context, "context").get());
        this.context = context;
    }

    @Override
    protected String newSslHandlerName() {
        return SSL_HANDLER_NAME;
    }

    @Override
    protected SslHandler newSslHandler(ChannelHandlerContext ctx, SslContext atStart) {
        return context.get().newHandler(ctx.alloc());
    }

    @Override
    protected ChannelHandler newNonSslHandler(ChannelHandlerContext ctx) {
        return new PlainTextRefusal();
    }
}

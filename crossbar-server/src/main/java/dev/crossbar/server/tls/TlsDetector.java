package dev.crossbar.server.tls;

import static java.util.Objects.requireNonNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first handler on a TLS port: looks at the first record header and, for TLS, replaces itself
 * with an {@link SslHandler} from the context current at that moment (so a reloaded certificate
 * serves new connections). Anything else (a client speaking plain HTTP or WebSocket to the TLS
 * port) gets a plain-text {@code 400} saying to use {@code https://} or {@code wss://}, and the
 * connection is closed: a clear refusal rather than a TLS alert the client cannot read.
 *
 * <p>Ownership: buffered bytes pass to the SslHandler with the pipeline change; after a refusal,
 * what arrives is discarded.
 */
public final class TlsDetector extends ByteToMessageDecoder {

    private static final Logger log = LoggerFactory.getLogger(TlsDetector.class);

    /** Bytes needed to tell: a TLS record header. */
    static final int RECORD_HEADER_BYTES = 5;
    /** The pipeline name the SslHandler takes. */
    public static final String SSL_HANDLER_NAME = "tls";
    private static final String REFUSAL_BODY =
            "400 Bad Request: this port requires TLS; connect with https:// or wss:// here\n";
    /** What a plain-text client is told, as a complete HTTP response. */
    static final String PLAIN_TEXT_REFUSAL = "HTTP/1.1 400 Bad Request\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: " + REFUSAL_BODY.length() + "\r\n"
            + "Connection: close\r\n"
            + "\r\n"
            + REFUSAL_BODY;

    private final Supplier<SslContext> context;
    private boolean refused;

    public TlsDetector(Supplier<SslContext> context) {
        this.context = requireNonNull(context, "context");
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (refused) {
            in.skipBytes(in.readableBytes());
            return;
        }
        if (in.readableBytes() < RECORD_HEADER_BYTES) {
            return;
        }
        if (SslHandler.isEncrypted(in, false)) {
            SslHandler ssl = context.get().newHandler(ctx.alloc());
            try {
                ctx.pipeline().replace(this, SSL_HANDLER_NAME, ssl);
                ssl = null;
            } finally {
                if (ssl != null) {
                    ReferenceCountUtil.safeRelease(ssl.engine());
                }
            }
            return;
        }
        refused = true;
        in.skipBytes(in.readableBytes());
        log.debug("{} plain text on the TLS port; refusing", ctx.channel());
        ctx.writeAndFlush(ByteBufUtil.writeAscii(ctx.alloc(), PLAIN_TEXT_REFUSAL)).addListener(ChannelFutureListener.CLOSE);
    }
}

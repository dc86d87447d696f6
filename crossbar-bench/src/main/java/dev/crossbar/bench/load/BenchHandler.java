package dev.crossbar.bench.load;

import io.netty.buffer.ByteBufHolder;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of one benchmark connection: hands each whole data message to its
 * {@link IntegrityChecker} (if it receives), tells its publisher after each read that receivers
 * made progress, and lets its {@link Sender} (if it sends) resume when the socket drains.
 *
 * <p>Ownership: the last inbound handler; it releases every message it reads.
 */
final class BenchHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(BenchHandler.class);

    private final Function<EventExecutor, IntegrityChecker> checkerFactory;
    private final Runnable onProgress;
    private IntegrityChecker checker;
    private Sender sender;
    /** Data messages read by a connection that does not check them (publishers, idle clients). */
    private final AtomicLong unchecked = new AtomicLong();
    private final AtomicLong errors;

    /**
     * @param checkerFactory builds the checker on the connection's loop (to use that loop's
     *                       histogram); null for a connection that only counts what it gets
     * @param onProgress     called after each read that delivered messages; may be null
     * @param errors         shared count of connection errors
     */
    BenchHandler(Function<EventExecutor, IntegrityChecker> checkerFactory, Runnable onProgress, AtomicLong errors) {
        this.checkerFactory = checkerFactory;
        this.onProgress = onProgress;
        this.errors = errors;
    }

    void sender(Sender s) {
        this.sender = s;
    }

    /** The checker, once the handler is in a pipeline; null for a non-checking connection. */
    IntegrityChecker checker() {
        return checker;
    }

    long unchecked() {
        return unchecked.getOpaque();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (checkerFactory != null) {
            checker = checkerFactory.apply(ctx.executor());
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof BinaryWebSocketFrame || msg instanceof TextWebSocketFrame) {
                if (checker != null) {
                    checker.onMessage(((ByteBufHolder) msg).content(), System.nanoTime());
                } else {
                    unchecked.setOpaque(unchecked.getPlain() + 1);
                }
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (onProgress != null) {
            onProgress.run();
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (sender != null && ctx.channel().isWritable()) {
            sender.run();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        errors.incrementAndGet();
        // Counted either way (the run reports "errors"); a reset by the relay is expected news.
        if (cause instanceof IOException) {
            log.debug("{} connection error: {}", ctx.channel(), cause.toString());
        } else {
            log.warn("{} closing after unexpected error", ctx.channel(), cause);
        }
        ctx.close();
    }
}

package dev.crossbar.server.websocket;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.util.List;

/**
 * What an upgraded WebSocket connection reads: the client's frames ({@link FrameDecoder}) made
 * into whole messages, each passed on as one final text or binary frame, and everything else
 * handed to the connection's {@link ConnectionLifecycle}.
 *
 * <ul>
 *   <li>A fragmented message is joined in one growing buffer before it is passed on, so fragments
 *       from two senders can never interleave at a receiver; past {@code maxMessageBytes} the
 *       client is closed with 1009. (Appending to one buffer, not a composite of fragments, keeps a
 *       message sent as millions of one-byte fragments linear in time and memory.)</li>
 *   <li>Text is checked as UTF-8 as it arrives ({@link Utf8Check}), fragment by fragment, and a
 *       client that sends anything else is closed with 1007 at the first bad fragment.</li>
 *   <li>A ping is answered with a pong, a pong (the answer to the keepalive's ping) is dropped, and
 *       the client's close frame answered or taken as the end of the closing handshake: all by the
 *       lifecycle ({@link ConnectionLifecycle#pingReceived}, {@link ConnectionLifecycle#closeReceived}).</li>
 *   <li>A violation, the decoder's or one of the two above, goes to the lifecycle too
 *       ({@link ConnectionLifecycle#protocolViolation}), which answers it with its code and reason
 *       and closes the socket when the client answers; until then the decoder skips what the client
 *       sends, and passes on nothing more.</li>
 * </ul>
 *
 * <p>Why all in one handler: every handler a message crosses between the socket and its session is
 * a few more objects read for each message, and with a campus's thousands of connections they are
 * rarely in the processor's cache. After the upgrade a message meets this handler and then its
 * session; the lifecycle reads nothing.
 *
 * <p>The relay puts it in place of Netty's decoder and protocol handler once the handshake is done
 * ({@link ProtocolSwap}), before any frame has been read.
 *
 * <p>Ownership: a message passed on owns its buffer, which the next handler releases. Fragments are
 * copied into the message being joined and released as they arrive; what is being joined when the
 * connection ends is released here. Control frames go to the lifecycle, which takes them.
 */
public final class MessageReader extends FrameDecoder {

    private final int maxMessageBytes;
    private final Utf8Check utf8 = new Utf8Check();
    private ConnectionLifecycle lifecycle;
    /** The fragmented message being joined, or null. */
    private ByteBuf pending;
    private boolean pendingText;

    /** @param maxMessageBytes the largest message a client may send; more is closed with 1009 */
    public MessageReader(int maxMessageBytes) {
        super(maxMessageBytes);
        this.maxMessageBytes = maxMessageBytes;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        lifecycle = ConnectionLifecycle.of(ctx.pipeline());
    }

    @Override
    void decoded(ChannelHandlerContext ctx, ByteBuf in, WebSocketFrame frame, List<Object> out) {
        if (frame instanceof BinaryWebSocketFrame || frame instanceof TextWebSocketFrame) {
            startMessage(in, frame, out);
        } else if (frame instanceof ContinuationWebSocketFrame) {
            continueMessage(ctx, in, frame, out);
        } else if (frame instanceof PingWebSocketFrame) {
            lifecycle.pingReceived(frame.content());
        } else if (frame instanceof CloseWebSocketFrame close) {
            if (violated()) {
                close.release();
                lifecycle.clientClosedAfterViolation();
            } else {
                lifecycle.closeReceived(close);
            }
        } else {
            frame.release(); // a pong: the keepalive's answer, heard already by the idle timer
        }
    }

    /** A message's first frame: passed on if it is the whole message, else kept to be joined. */
    private void startMessage(ByteBuf in, WebSocketFrame frame, List<Object> out) {
        boolean text = frame instanceof TextWebSocketFrame;
        if (text && !(utf8.update(frame.content()) && (!frame.isFinalFragment() || utf8.end()))) {
            frame.release();
            notText(in);
        }
        if (frame.isFinalFragment()) {
            out.add(frame);
        } else {
            pending = frame.content();
            pendingText = text;
        }
    }

    /** The next fragment of the message being joined (the decoder has checked there is one). */
    private void continueMessage(ChannelHandlerContext ctx, ByteBuf in, WebSocketFrame fragment, List<Object> out) {
        try {
            ByteBuf part = fragment.content();
            long total = (long) pending.readableBytes() + part.readableBytes();
            if (total > maxMessageBytes) {
                releasePending();
                violation(in, WebSocketCloseStatus.MESSAGE_TOO_BIG,
                        "message larger than " + maxMessageBytes + " bytes (the relay's limit)");
            }
            if (pendingText && !(utf8.update(part) && (!fragment.isFinalFragment() || utf8.end()))) {
                releasePending();
                notText(in);
            }
            if (pending.maxWritableBytes() < part.readableBytes() || pending.isReadOnly()) {
                ByteBuf grown = ctx.alloc().buffer((int) Math.min(maxMessageBytes, Math.max(total * 2, 1024)),
                        maxMessageBytes);
                grown.writeBytes(pending);
                pending.release();
                pending = grown;
            }
            pending.writeBytes(part);
        } finally {
            fragment.release();
        }
        if (fragment.isFinalFragment()) {
            ByteBuf whole = pending;
            pending = null;
            out.add(pendingText ? new TextWebSocketFrame(true, 0, whole) : new BinaryWebSocketFrame(true, 0, whole));
        }
    }

    private void notText(ByteBuf in) {
        utf8.end();
        violation(in, WebSocketCloseStatus.INVALID_PAYLOAD_DATA, "bytes are not UTF-8");
    }

    /** A violation (thrown by the decoding above): answered by the lifecycle, with what the decoder knows of it. */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof CorruptedWebSocketFrameException violation) {
            releasePending();
            lifecycle.protocolViolation(violation, !invalidCloseFrame(), closeReceived());
        } else {
            ctx.fireExceptionCaught(cause);
        }
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        releasePending();
        super.handlerRemoved0(ctx);
    }

    private void releasePending() {
        if (pending != null) {
            pending.release();
            pending = null;
        }
    }
}

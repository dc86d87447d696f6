package dev.crossbar.server.session;

import dev.crossbar.server.websocket.CloseCodes;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;

/**
 * Turns WebSocket frames into whole messages: a fragmented message is reassembled before it is
 * routed, so fragments from two senders can never interleave at a receiver, and its total size is
 * held to the message limit (close 1009 when exceeded).
 *
 * <p>Fragments are appended to one growing buffer rather than a composite of fragments: a client
 * sending a message as millions of one-byte fragments then costs linear time and memory, not a
 * quadratic series of consolidations.
 *
 * <p>Ownership: an unfragmented data frame is passed on as it came. Fragment contents are copied
 * and released as they arrive; the assembled frame (one reference) is passed on. Whatever is
 * pending when the channel closes is released.
 */
public final class MessageAssembler extends ChannelInboundHandlerAdapter {

    private final int maxMessageBytes;
    private ByteBuf pending;
    private boolean pendingText;
    private boolean closing;

    public MessageAssembler(int maxMessageBytes) {
        this.maxMessageBytes = maxMessageBytes;
    }

    /** Whether this handler has failed the connection: no message may be relayed after that. */
    boolean closing() {
        return closing;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof WebSocketFrame frame)) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (closing) {
            frame.release();
            return;
        }
        if (frame instanceof ContinuationWebSocketFrame) {
            continueMessage(ctx, frame);
        } else if (frame instanceof TextWebSocketFrame || frame instanceof BinaryWebSocketFrame) {
            if (pending != null) {
                frame.release();
                fail(ctx, CloseCodes.PROTOCOL_ERROR, "new message started before the fragmented one ended");
            } else if (frame.isFinalFragment()) {
                ctx.fireChannelRead(frame);
            } else {
                startMessage(frame);
            }
        } else {
            ctx.fireChannelRead(frame);
        }
    }

    private void startMessage(WebSocketFrame first) {
        pendingText = first instanceof TextWebSocketFrame;
        // Keep the first fragment as is; most fragmented messages have only a few fragments.
        pending = first.content();
    }

    private void continueMessage(ChannelHandlerContext ctx, WebSocketFrame fragment) {
        try {
            if (pending == null) {
                fail(ctx, CloseCodes.PROTOCOL_ERROR, "continuation frame without a message to continue");
                return;
            }
            ByteBuf part = fragment.content();
            long total = (long) pending.readableBytes() + part.readableBytes();
            if (total > maxMessageBytes) {
                fail(ctx, CloseCodes.MESSAGE_TOO_BIG,
                        "message larger than " + maxMessageBytes + " bytes (the relay's limit)");
                return;
            }
            if (pending.maxWritableBytes() < part.readableBytes() || pending.isReadOnly()) {
                ByteBuf grown = ctx.alloc().buffer(
                        (int) Math.min(maxMessageBytes, Math.max(total * 2, 1024)), maxMessageBytes);
                grown.writeBytes(pending);
                pending.release();
                pending = grown;
            }
            pending.writeBytes(part);
            if (fragment.isFinalFragment()) {
                ByteBuf whole = pending;
                pending = null;
                ctx.fireChannelRead(pendingText ? new TextWebSocketFrame(true, 0, whole) : new BinaryWebSocketFrame(true, 0, whole));
            }
        } finally {
            fragment.release();
        }
    }

    private void fail(ChannelHandlerContext ctx, WebSocketCloseStatus status, String reason) {
        closing = true;
        releasePending();
        ConnectionLifecycle.of(ctx.pipeline()).close(status, reason);
    }

    private void releasePending() {
        if (pending != null) {
            pending.release();
            pending = null;
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releasePending();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        releasePending();
        ctx.fireChannelInactive();
    }

}

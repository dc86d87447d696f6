package dev.crossbar.server.session;

import dev.crossbar.core.relay.PreparedFrame;
import dev.crossbar.server.websocket.ConnectionLifecycle;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;

/**
 * Writes relayed frames to one receiver's socket, and knows what it has not read yet.
 *
 * <p>Frames are written from the frame encoder's context, already encoded: the handlers between the
 * session and there would only refuse them after a close frame, so every write first checks
 * {@link ConnectionLifecycle#isClosing()}, which every close frame sets.
 *
 * <p>The relay's second buffer policy: small frames (up to {@link #COALESCE_MAX_FRAME_BYTES}) written
 * between two flushes are copied into one buffer of this receiver's, written at the flush: one
 * write, one outbound entry and one element of the system call's vector for the lot, as a client
 * library writing its queue does. A larger frame is written as a {@code retainedDuplicate()} of the
 * one every receiver shares, after what was coalesced ahead of it.
 *
 * <p>Ownership: frames are borrowed; a duplicate written is the channel's to release; the coalesced
 * buffer is the channel's once written, and released here if the connection is closing first
 * ({@link #discard}). Used on the receiver's event loop only.
 */
final class Outlet {

    /** Frames up to this size are copied into the coalesced buffer rather than shared. */
    static final int COALESCE_MAX_FRAME_BYTES = 1024;
    /** The most one coalesced buffer holds; a frame that does not fit starts the next one. */
    static final int COALESCE_BUFFER_BYTES = 16 * 1024;

    private final ChannelHandlerContext out;
    private final ConnectionLifecycle lifecycle;
    private final boolean coalesce;
    /** Small frames written since the last flush, not yet in the channel; null when none. */
    private ByteBuf coalesced;
    /** How many bytes the last coalesced buffer held: what the next one is likely to need. */
    private int lastCoalescedBytes;
    /** Frame bytes written in all; less what is pending, what the client has read. */
    private long writtenBytes;
    private boolean needsFlush;

    /**
     * @param out      the frame encoder's context
     * @param coalesce whether small frames are coalesced (not where the mode reads the channel's own
     *                 queue to pace the receiver)
     */
    Outlet(ChannelHandlerContext out, ConnectionLifecycle lifecycle, boolean coalesce) {
        this.out = out;
        this.lifecycle = lifecycle;
        this.coalesce = coalesce;
    }

    /**
     * Writes one frame, without flushing, unless a close frame has gone out.
     *
     * @return whether this left the receiver needing a flush it did not need before
     */
    boolean write(PreparedFrame frame) {
        ByteBuf bytes = frame.content();
        int length = bytes.readableBytes();
        writtenBytes += length;
        if (coalesce && length <= COALESCE_MAX_FRAME_BYTES) {
            if (coalesced != null && coalesced.maxWritableBytes() < length) {
                writeCoalesced();
            }
            if (coalesced == null) {
                // Sized as the last one was filled: a slow reader sent one small frame per flush
                // queues buffers the size of its frames, not of the limit.
                coalesced = out.alloc().directBuffer(Math.max(length, lastCoalescedBytes),
                        Math.max(length, COALESCE_BUFFER_BYTES));
            }
            coalesced.writeBytes(bytes, bytes.readerIndex(), length);
        } else {
            writeCoalesced(); // what was written before this frame goes before it
            out.write(bytes.retainedDuplicate(), out.voidPromise());
        }
        if (needsFlush) {
            return false;
        }
        needsFlush = true;
        return true;
    }

    /** Sends what was written since the last flush. */
    void flush() {
        if (needsFlush) {
            needsFlush = false;
            writeCoalesced();
            out.flush();
        }
    }

    /** Bytes written that the client has not read: in the channel, or still coalesced. */
    long pendingBytes() {
        ChannelOutboundBuffer buffer = out.channel().unsafe().outboundBuffer();
        long inChannel = buffer == null ? 0 : buffer.totalPendingWriteBytes();
        return coalesced == null ? inChannel : inChannel + coalesced.readableBytes();
    }

    /** Bytes the client has taken off its queue since it connected (pings and Netty's bookkeeping make this a few bytes off). */
    long drainedBytes() {
        return writtenBytes - pendingBytes();
    }

    /** Releases what was coalesced and never written: the connection is ending. */
    void discard() {
        if (coalesced != null) {
            coalesced.release();
            coalesced = null;
        }
    }

    private void writeCoalesced() {
        ByteBuf frames = coalesced;
        if (frames != null) {
            coalesced = null;
            lastCoalescedBytes = frames.readableBytes();
            if (lifecycle.isClosing()) {
                frames.release(); // nothing may follow a close frame; they would never be read
            } else {
                out.write(frames, out.voidPromise());
            }
        }
    }
}

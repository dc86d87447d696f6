package dev.crossbar.server.websocket;

import dev.crossbar.core.relay.PreparedFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes a client's RFC 6455 frames into Netty's frame objects, as Netty's
 * {@code WebSocket08FrameDecoder} does with the relay's settings (masked frames only, no
 * extensions, a violation thrown and the connection's end left to the pipeline), with one
 * difference: each payload is unmasked while it is copied out of the socket reads
 * ({@link UnmaskingCopy}), one pass over its bytes instead of two.
 *
 * <p>Checks, each thrown as a {@link CorruptedWebSocketFrameException} with the code and the
 * reason, for the {@link MessageReader} to hand to the lifecycle: reserved bits (1002), an unmasked
 * frame (1002), a fragmented or oversized (over 125 bytes) control frame, a reserved opcode, a
 * close frame of one byte or with an invalid code (1002) or a reason that is not UTF-8 (1007), a
 * continuation with no message to continue, a new message inside a fragmented one, a length not in
 * its shortest encoding (1002), and a frame longer than {@code maxFramePayloadLength} (1009: the
 * whole message's limit is the reader's). After a close frame every further byte is
 * skipped; after a violation, every further frame but the client's close frame (see
 * {@link #violation}). This class decodes frames; the relay's connections read through its
 * {@link MessageReader}, which makes whole messages of them, checks text and answers control frames.
 *
 * <p>A payload that is whole in what has been read is copied out in one go (a whole message under
 * 64 KiB into a {@link PreparedFrame#payloadBuffer}, behind the header the relay will send it
 * with, so that framing it costs no second copy); one that arrives in pieces is taken piece by
 * piece as it comes, into chunks of its own, so that no socket read is held while the rest is
 * awaited ({@link #gather}), and passed on as a composite of its chunks.
 *
 * <p>The relay puts its reader in place of Netty's decoder when the upgrade completes, before any
 * frame has been read ({@link ProtocolSwap}).
 *
 * <p>Ownership: the reads are {@link ByteToMessageDecoder}'s; a payload's chunks are this
 * decoder's until the frame is passed on (released here if the connection ends first); each frame
 * passed on owns its buffer, which the handler that consumes the frame releases (after a violation,
 * the empty close frame that stands for the client's too). Bytes skipped after a
 * violation are only consumed from the reads.
 */
public class FrameDecoder extends ByteToMessageDecoder implements WebSocketFrameDecoder {

    private static final int OPCODE_CONTINUATION = 0x0;
    private static final int OPCODE_TEXT = 0x1;
    private static final int OPCODE_BINARY = 0x2;
    private static final int OPCODE_CLOSE = 0x8;
    private static final int OPCODE_PING = 0x9;
    private static final int OPCODE_PONG = 0xA;
    private static final int MAX_CONTROL_PAYLOAD = 125;

    /** Smallest and largest chunk a payload that arrives in pieces is gathered in (see {@link #gather}). */
    static final int MIN_CHUNK = 4 * 1024;
    static final int MAX_CHUNK = 64 * 1024;

    private final long maxFramePayloadLength;

    /** A header has been read and the payload it announced is awaited. */
    private boolean inPayload;
    private boolean fin;
    private int opcode;
    private int payloadLength;
    private int maskKey;
    /** Payload bytes already taken, when the payload arrives in pieces; 0 otherwise. */
    private int received;
    /** Where they went: full chunks, then the one being filled. Created at the first payload in pieces. */
    private List<ByteBuf> chunks;
    /** Inside a fragmented message: the next data frame must be a continuation. */
    private boolean fragmented;
    /** A close frame was read, or a violation found that frames cannot be skipped past: the rest of the stream is skipped. */
    private boolean done;
    /** The client's close frame has been read (valid or not, before or after a violation). */
    private boolean closeReceived;
    /** A violation was found: frames are skipped, their headers read only to notice the client's close frame. */
    private boolean violated;
    /** The violation was in the body of the client's close frame. */
    private boolean invalidCloseFrame;
    /** After a violation: bytes of the skipped frame's payload still to come. */
    private long skipping;

    /** @param maxFramePayloadLength the largest payload one frame may announce; more is closed with 1009 */
    public FrameDecoder(long maxFramePayloadLength) {
        if (maxFramePayloadLength <= 0 || maxFramePayloadLength > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("maxFramePayloadLength: " + maxFramePayloadLength
                    + " (expected: 1 to " + Integer.MAX_VALUE + ")");
        }
        this.maxFramePayloadLength = maxFramePayloadLength;
        // What is left between reads is at most a header's first bytes; a composite adds the next
        // read to them without copying it, as merging into one buffer would.
        setCumulator(COMPOSITE_CUMULATOR);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (done) {
            in.skipBytes(in.readableBytes());
            return;
        }
        if (violated) {
            if (skipToClientClose(in)) {
                decoded(ctx, in, new CloseWebSocketFrame(true, 0, Unpooled.EMPTY_BUFFER), out);
            }
            return;
        }
        if (!inPayload && !readHeader(in)) {
            return;
        }
        if (received == 0 && in.readableBytes() >= payloadLength) { // the whole payload is here: one copy
            inPayload = false;
            ByteBuf into = payloadLength == 0 ? null
                    : wholeSmallMessage() ? PreparedFrame.payloadBuffer(ctx.alloc(), opcode == OPCODE_TEXT, payloadLength)
                    : ctx.alloc().buffer(payloadLength);
            ByteBuf payload = into == null ? Unpooled.EMPTY_BUFFER : UnmaskingCopy.copy(into, in, payloadLength, maskKey);
            decoded(ctx, in, frame(in, payload), out);
            return;
        }
        int n = Math.min(in.readableBytes(), payloadLength - received);
        if (n > 0) {
            gather(ctx, in, n);
            if (received == payloadLength) {
                inPayload = false;
                decoded(ctx, in, frame(in, takeGathered(ctx)), out);
            }
        }
    }

    /**
     * One frame decoded from {@code in}: passed on. {@link MessageReader} makes whole messages of
     * them instead, and may find a violation in one ({@link #violation}, with this {@code in}).
     * Takes ownership of {@code frame}.
     */
    void decoded(ChannelHandlerContext ctx, ByteBuf in, WebSocketFrame frame, List<Object> out) {
        out.add(frame);
    }

    /**
     * A message in one frame, small enough for the relay to send its payload in one buffer behind
     * the header: read into a {@link PreparedFrame#payloadBuffer}, it is relayed without another copy.
     */
    private boolean wholeSmallMessage() {
        return fin && (opcode == OPCODE_TEXT || opcode == OPCODE_BINARY)
                && payloadLength < PreparedFrame.CONTIGUOUS_LIMIT;
    }

    /**
     * Takes {@code n} more bytes of a payload that is arriving in pieces: unmasks them into chunks
     * of the payload's own, while they are fresh from the socket, and consumes them, so that no
     * socket read is held while the rest of the frame is awaited. Holding the reads would cost the
     * memory of every read buffer, however few bytes it carried: a client sending a large frame a
     * byte at a time would make the relay hold a read buffer and its bookkeeping, a few hundred
     * bytes, per byte. A chunk is sized to what has arrived (at least {@value #MIN_CHUNK} bytes, at
     * most {@value #MAX_CHUNK}, never past the payload's end), so what is held is what was sent,
     * plus at most one partly filled chunk.
     */
    private void gather(ChannelHandlerContext ctx, ByteBuf in, int n) {
        if (chunks == null) {
            chunks = new ArrayList<>(4);
        }
        while (n > 0) {
            ByteBuf chunk = chunks.isEmpty() ? null : chunks.get(chunks.size() - 1);
            if (chunk == null || !chunk.isWritable()) {
                int size = Math.min(payloadLength - received, Math.max(MIN_CHUNK, Math.min(n, MAX_CHUNK)));
                chunk = ctx.alloc().buffer(size, size);
                chunks.add(chunk);
            }
            int k = Math.min(n, chunk.writableBytes());
            // Payload byte i is XORed with key byte i mod 4: this piece starts at byte `received`.
            UnmaskingCopy.append(in, k, Integer.rotateLeft(maskKey, 8 * (received & 3)), chunk);
            received += k;
            n -= k;
        }
    }

    /** The gathered payload, one chunk or a composite of them; the caller owns it. */
    private ByteBuf takeGathered(ChannelHandlerContext ctx) {
        received = 0;
        if (chunks.size() == 1) {
            return chunks.remove(0);
        }
        CompositeByteBuf whole = ctx.alloc().compositeBuffer(chunks.size());
        whole.addComponents(true, chunks); // takes them over
        chunks.clear();
        return whole;
    }

    /** A payload still being gathered when the connection ends is released with the decoder. */
    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        if (chunks != null) {
            chunks.forEach(ByteBuf::release);
            chunks.clear();
        }
        received = 0;
    }

    /** Reads a whole header if it has arrived (checking it as far as it goes); false to wait for more. */
    private boolean readHeader(ByteBuf in) {
        if (in.readableBytes() < 2) {
            return false;
        }
        int start = in.readerIndex();
        int b0 = in.getUnsignedByte(start);
        int b1 = in.getUnsignedByte(start + 1);
        boolean finalFragment = (b0 & 0x80) != 0;
        int code = b0 & 0x0F;
        int length7 = b1 & 0x7F;
        checkFirstBytes(in, b0, b1, finalFragment, code, length7);

        int lengthBytes = length7 == 126 ? 2 : length7 == 127 ? 8 : 0;
        if (in.readableBytes() < 2 + lengthBytes) {
            return false;
        }
        long length;
        if (lengthBytes == 2) {
            length = in.getUnsignedShort(start + 2);
            if (length < 126) {
                violation(in, WebSocketCloseStatus.PROTOCOL_ERROR,
                        "invalid data frame length (not using minimal length encoding)");
            }
        } else if (lengthBytes == 8) {
            length = in.getLong(start + 2);
            if (length < 0) {
                violation(in, WebSocketCloseStatus.PROTOCOL_ERROR, "invalid data frame length (negative length)");
            }
            if (length < 65536) {
                violation(in, WebSocketCloseStatus.PROTOCOL_ERROR,
                        "invalid data frame length (not using minimal length encoding)");
            }
        } else {
            length = length7;
        }
        if (length > maxFramePayloadLength) {
            violation(in, WebSocketCloseStatus.MESSAGE_TOO_BIG,
                    "Max frame length of " + maxFramePayloadLength + " has been exceeded.");
        }
        if (in.readableBytes() < 2 + lengthBytes + 4) {
            return false;
        }
        maskKey = in.getInt(start + 2 + lengthBytes);
        in.skipBytes(2 + lengthBytes + 4);
        fin = finalFragment;
        opcode = code;
        payloadLength = (int) length;
        inPayload = true;
        return true;
    }

    /** The checks the first two bytes allow, in the order Netty's decoder makes them. */
    private void checkFirstBytes(ByteBuf in, int b0, int b1, boolean finalFragment, int code, int length7) {
        int rsv = (b0 & 0x70) >> 4;
        if (rsv != 0) {
            violation(in, WebSocketCloseStatus.PROTOCOL_ERROR, "RSV != 0 and no extension negotiated, RSV:" + rsv);
        }
        if ((b1 & 0x80) == 0) {
            violation(in, WebSocketCloseStatus.PROTOCOL_ERROR, "received a frame that is not masked as expected");
        }
        if (code > 7) {
            if (!finalFragment) {
                violation(in, WebSocketCloseStatus.PROTOCOL_ERROR, "fragmented control frame");
            }
            if (length7 > MAX_CONTROL_PAYLOAD) {
                violation(in, WebSocketCloseStatus.PROTOCOL_ERROR, "control frame with payload length > 125 octets");
            }
            if (code != OPCODE_CLOSE && code != OPCODE_PING && code != OPCODE_PONG) {
                violation(in, WebSocketCloseStatus.PROTOCOL_ERROR, "control frame using reserved opcode " + code);
            }
            if (code == OPCODE_CLOSE && length7 == 1) {
                violation(in, WebSocketCloseStatus.PROTOCOL_ERROR, "received close control frame with payload len 1");
            }
        } else {
            if (code != OPCODE_CONTINUATION && code != OPCODE_TEXT && code != OPCODE_BINARY) {
                violation(in, WebSocketCloseStatus.PROTOCOL_ERROR, "data frame using reserved opcode " + code);
            }
            if (!fragmented && code == OPCODE_CONTINUATION) {
                violation(in, WebSocketCloseStatus.PROTOCOL_ERROR,
                        "received continuation data frame outside fragmented message");
            }
            if (fragmented && code != OPCODE_CONTINUATION) {
                violation(in, WebSocketCloseStatus.PROTOCOL_ERROR,
                        "received non-continuation data frame while inside fragmented message");
            }
        }
    }

    /** The frame for the payload just read; takes ownership of {@code payload}. */
    private WebSocketFrame frame(ByteBuf in, ByteBuf payload) {
        switch (opcode) {
            case OPCODE_PING:
                return new PingWebSocketFrame(true, 0, payload);
            case OPCODE_PONG:
                return new PongWebSocketFrame(true, 0, payload);
            case OPCODE_CLOSE:
                done = true;
                closeReceived = true;
                checkCloseBody(in, payload);
                return new CloseWebSocketFrame(true, 0, payload);
            default:
                fragmented = !fin; // control frames may come between fragments: only data frames change it
                return opcode == OPCODE_TEXT ? new TextWebSocketFrame(fin, 0, payload)
                        : opcode == OPCODE_BINARY ? new BinaryWebSocketFrame(fin, 0, payload)
                        : new ContinuationWebSocketFrame(fin, 0, payload);
        }
    }

    /** A close frame's body is empty, or a valid status code and a UTF-8 reason; releases {@code body} if not. */
    private void checkCloseBody(ByteBuf in, ByteBuf body) {
        if (!body.isReadable()) {
            return;
        }
        try {
            int code = body.getShort(body.readerIndex()); // signed, as Netty's check takes it
            if (!WebSocketCloseStatus.isValidStatusCode(code)) {
                violation(in, WebSocketCloseStatus.PROTOCOL_ERROR, "Invalid close frame getStatus code: " + code);
            }
            if (body.readableBytes() > 2 && !Utf8Check.isText(body.slice(body.readerIndex() + 2, body.readableBytes() - 2))) {
                violation(in, WebSocketCloseStatus.INVALID_PAYLOAD_DATA, "bytes are not UTF-8");
            }
        } catch (CorruptedWebSocketFrameException e) {
            body.release();
            throw e;
        }
    }

    /**
     * Throws, as Netty's decoder does without {@code closeOnProtocolViolation} (answering is the
     * lifecycle's part, through the reader), and from here on passes up no frame but the client's
     * close frame, which ends the connection: after a violation in a header, found with the
     * header still unread, frames are skipped whole, their headers read only for that (the
     * client will often answer the relay's close frame with its own); after one in a close
     * frame's body, the client has sent its last frame and the rest is skipped.
     */
    final void violation(ByteBuf in, WebSocketCloseStatus status, String reason) {
        inPayload = false;
        if (closeReceived) {
            invalidCloseFrame = true;
            done = true;
            in.skipBytes(in.readableBytes());
        } else {
            violated = true;
            skipping = 0;
            skipToClientClose(in); // from the offending header: it may be a close frame itself
        }
        throw new CorruptedWebSocketFrameException(status, reason);
    }

    /**
     * Skips frames, reading only their headers, up to and including the client's close frame;
     * true when that has been read. A length that cannot be skipped (negative) ends it: the
     * rest of the stream is skipped.
     */
    private boolean skipToClientClose(ByteBuf in) {
        while (true) {
            int n = (int) Math.min(skipping, in.readableBytes());
            in.skipBytes(n);
            skipping -= n;
            if (skipping > 0 || in.readableBytes() < 2) {
                return false;
            }
            int start = in.readerIndex();
            int b1 = in.getUnsignedByte(start + 1);
            int length7 = b1 & 0x7F;
            int lengthBytes = length7 == 126 ? 2 : length7 == 127 ? 8 : 0;
            int headerBytes = 2 + lengthBytes + ((b1 & 0x80) != 0 ? 4 : 0);
            if (in.readableBytes() < headerBytes) {
                return false;
            }
            skipping = lengthBytes == 2 ? in.getUnsignedShort(start + 2)
                    : lengthBytes == 8 ? in.getLong(start + 2) : length7;
            boolean close = (in.getUnsignedByte(start) & 0x0F) == OPCODE_CLOSE;
            if (close || skipping < 0) {
                closeReceived = close;
                done = true;
                in.skipBytes(in.readableBytes());
                return close;
            }
            in.skipBytes(headerBytes);
        }
    }

    /** Whether a violation was found: frames are skipped up to the client's close frame. */
    final boolean violated() {
        return violated;
    }

    /** Whether the client's close frame has been read: it sends nothing after it. */
    final boolean closeReceived() {
        return closeReceived;
    }

    /**
     * Whether the violation was in the body of the client's close frame, which Netty's decoder
     * answers by closing without a close frame of its own.
     */
    final boolean invalidCloseFrame() {
        return invalidCloseFrame;
    }
}

package dev.crossbar.core.relay;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.WrappedByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocket08FrameEncoder;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The prepared frame must be byte-for-byte what Netty's own server-side encoder writes. */
class PreparedFrameTest {

    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 125, 126, 4600, 65535, PreparedFrame.CONTIGUOUS_LIMIT - 1,
            PreparedFrame.CONTIGUOUS_LIMIT, PreparedFrame.CONTIGUOUS_LIMIT + 1, 1 << 20})
    void matchesNettysEncoderOnBothSidesOfTheContiguousLimit(int length) {
        byte[] bytes = new byte[length];
        new Random(length).nextBytes(bytes);
        for (boolean text : new boolean[] {false, true}) {
            ByteBuf payload = alloc.directBuffer(length).writeBytes(bytes);
            PreparedFrame frame = PreparedFrame.of(alloc, text, payload, 42L);
            try {
                assertArrayEquals(nettyEncoding(text, bytes), ByteBufUtil.getBytes(frame.content()));
                assertEquals(length, frame.payloadLength());
                assertEquals(length + PreparedFrame.headerLength(length), frame.frameLength());
                assertEquals(text, frame.isText());
                assertEquals(42L, frame.publishedAtNanos());
            } finally {
                frame.release();
            }
            // The frame owned the payload: a copy releases it at once, a composite with the frame.
            assertEquals(0, payload.refCnt());
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 125, 126, 4600, 65535})
    void aPayloadBufferBecomesTheFrameItselfWithNettysBytes(int length) {
        byte[] bytes = new byte[length];
        new Random(length).nextBytes(bytes);
        for (boolean text : new boolean[] {false, true}) {
            ByteBuf payload = PreparedFrame.payloadBuffer(alloc, text, length).writeBytes(bytes);
            assertArrayEquals(bytes, ByteBufUtil.getBytes(payload)); // readable: the payload alone
            PreparedFrame frame = PreparedFrame.of(alloc, text, payload, 42L);
            try {
                assertSame(payload, frame.content());
                assertArrayEquals(nettyEncoding(text, bytes), ByteBufUtil.getBytes(frame.content()));
                assertEquals(length, frame.payloadLength());
                assertEquals(1, payload.refCnt());
            } finally {
                frame.release();
            }
            assertEquals(0, payload.refCnt());
        }
    }

    @Test
    void aPayloadBufferSharedOrOfTheOtherTypeIsCopiedNotMoved() {
        byte[] bytes = new byte[300];
        new Random(3).nextBytes(bytes);
        // Shared: another holder's reader index must not move under it.
        ByteBuf shared = PreparedFrame.payloadBuffer(alloc, false, bytes.length).writeBytes(bytes);
        ByteBuf other = shared.retain();
        PreparedFrame frame = PreparedFrame.of(alloc, false, shared, 0L);
        try {
            assertNotSame(shared, frame.content());
            assertArrayEquals(nettyEncoding(false, bytes), ByteBufUtil.getBytes(frame.content()));
            assertArrayEquals(bytes, ByteBufUtil.getBytes(other));
        } finally {
            frame.release();
            other.release();
        }
        assertEquals(0, shared.refCnt());
        // Read as binary, relayed as text: the header in front is not this frame's.
        ByteBuf binary = PreparedFrame.payloadBuffer(alloc, false, bytes.length).writeBytes(bytes);
        PreparedFrame asText = PreparedFrame.of(alloc, true, binary, 0L);
        try {
            assertNotSame(binary, asText.content());
            assertArrayEquals(nettyEncoding(true, bytes), ByteBufUtil.getBytes(asText.content()));
        } finally {
            asText.release();
        }
        assertEquals(0, binary.refCnt());
    }

    @Test
    void aPayloadBufferIsOnlyForWhatGoesOutInOneBuffer() {
        assertThrows(IllegalArgumentException.class,
                () -> PreparedFrame.payloadBuffer(alloc, false, PreparedFrame.CONTIGUOUS_LIMIT));
    }

    @Test
    void largePayloadsAreSharedNotCopied() {
        ByteBuf payload = alloc.directBuffer(PreparedFrame.CONTIGUOUS_LIMIT).writeZero(PreparedFrame.CONTIGUOUS_LIMIT);
        PreparedFrame frame = PreparedFrame.of(alloc, false, payload, 0L);
        try {
            CompositeByteBuf content = assertInstanceOf(CompositeByteBuf.class, frame.content());
            assertEquals(2, content.numComponents());
            assertEquals(1, payload.refCnt());
        } finally {
            frame.release();
        }
        assertFalse(payload.refCnt() > 0);
    }

    @Test
    void aLargePayloadInManyPiecesIsSharedPieceByPiece() {
        // As the decoder passes on a payload that arrived over many reads: a composite of chunks.
        byte[] bytes = new byte[1 << 20];
        new Random(9).nextBytes(bytes);
        CompositeByteBuf payload = alloc.compositeDirectBuffer(64);
        for (int at = 0; at < bytes.length; at += 16 * 1024) {
            payload.addComponent(true, alloc.directBuffer(16 * 1024).writeBytes(bytes, at, 16 * 1024));
        }
        ByteBuf firstChunk = payload.component(0);
        PreparedFrame frame = PreparedFrame.of(alloc, false, payload, 0L);
        try {
            CompositeByteBuf content = assertInstanceOf(CompositeByteBuf.class, frame.content());
            assertEquals(1 + 64, content.numComponents()); // the header, then each chunk: nothing copied
            assertEquals(1, firstChunk.refCnt());
            assertArrayEquals(nettyEncoding(false, bytes), ByteBufUtil.getBytes(content));
        } finally {
            frame.release();
        }
        assertEquals(0, firstChunk.refCnt());
    }

    /**
     * On an event loop's kind of thread, the duplicates receivers write of a frame from the relay's
     * buffers ({@link RelayBuffers}) are recycled: once the first few are given back, every later
     * one is an object seen before, not a new one per receiver per message.
     */
    @Test
    void duplicatesOfAFrameFromTheRelaysBuffersAreRecycledOnEventLoopThreads() throws Exception {
        PreparedFrame frame = PreparedFrame.of(RelayBuffers.ALLOCATOR, false,
                RelayBuffers.ALLOCATOR.directBuffer(4600).writeZero(4600), 1L);
        Set<ByteBuf> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        AtomicInteger fresh = new AtomicInteger();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread loop = new FastThreadLocalThread(() -> {
            try {
                for (int i = 0; i < 128; i++) {
                    ByteBuf duplicate = frame.content().retainedDuplicate();
                    if (seen.add(innermost(duplicate)) && i >= 64) {
                        fresh.incrementAndGet();
                    }
                    duplicate.release();
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        });
        try {
            loop.start();
            loop.join(10_000);
            assertFalse(loop.isAlive(), "the loop thread did not finish");
            assertNull(failed.get());
            assertEquals(0, fresh.get(), "new duplicates after 64 given back");
            assertTrue(seen.size() <= 64, seen.size() + " distinct duplicates for 128 writes");
        } finally {
            frame.release();
        }
    }

    /** The buffer under leak detection's wrapper, if any (the tests run with paranoid leak detection). */
    private static ByteBuf innermost(ByteBuf buf) {
        return buf instanceof WrappedByteBuf wrapped ? wrapped.unwrap() : buf;
    }

    private static byte[] nettyEncoding(boolean text, byte[] bytes) {
        EmbeddedChannel ch = new EmbeddedChannel(new WebSocket08FrameEncoder(false));
        ch.writeOutbound(text ? new TextWebSocketFrame(Unpooled.wrappedBuffer(bytes))
                : new BinaryWebSocketFrame(Unpooled.wrappedBuffer(bytes)));
        ByteBuf all = Unpooled.buffer();
        ByteBuf part;
        while ((part = ch.readOutbound()) != null) {
            all.writeBytes(part);
            part.release();
        }
        ch.finishAndReleaseAll();
        byte[] out = ByteBufUtil.getBytes(all);
        all.release();
        return out;
    }
}

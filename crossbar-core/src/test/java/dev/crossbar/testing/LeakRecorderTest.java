package dev.crossbar.testing;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Proves the leak check can fail: a buffer dropped without release is reported. */
class LeakRecorderTest {

    @Test
    void reportsABufferThatWasNeverReleased() {
        leakOne();
        List<String> leaks = List.of();
        for (int i = 0; i < 20 && leaks.isEmpty(); i++) {
            LeakRecorder.collect();
            leaks = LeakRecorder.drain();
        }
        assertFalse(leaks.isEmpty(), "the deliberate leak was not reported");
        assertTrue(leaks.get(0).startsWith("LEAK: ByteBuf"), leaks.get(0));
    }

    private static void leakOne() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(16);
        b.writeLong(42);
    }
}

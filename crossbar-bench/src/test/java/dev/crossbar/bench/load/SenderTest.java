package dev.crossbar.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** How a sender writes: one frame per flush unless batched, never past its window or its cap. */
class SenderTest {

    /**
     * Counts flushes on their way to the (embedded) socket; optionally, like a drained socket
     * firing writability inside the flush, calls the sender back on the same stack.
     */
    private static final class FlushCounter extends ChannelOutboundHandlerAdapter {
        int flushes;
        Sender reenter;

        @Override
        public void flush(ChannelHandlerContext ctx) {
            flushes++;
            ctx.flush();
            if (reenter != null) {
                reenter.run();
            }
        }
    }

    private final FlushCounter flushes = new FlushCounter();
    private final AtomicLong acked = new AtomicLong(-1);
    private final RunClock clock = new RunClock();
    private EmbeddedChannel ch;

    @BeforeEach
    void open() {
        ch = new EmbeddedChannel(flushes);
        clock.start(0, TimeUnit.SECONDS.toNanos(60));
    }

    @AfterEach
    void close() {
        ch.releaseOutbound();
        assertFalse(ch.finish());
    }

    private Sender sender(int window, int batch, long maxMessages) {
        return new Sender(ch, 0, new MessageFormat(64), null, clock, 0, window, batch, acked::get, maxMessages);
    }

    private int written() {
        return ch.outboundMessages().size();
    }

    @Test
    void oneFramePerFlushByDefaultAndTheWindowHolds() {
        Sender s = sender(8, LoadConfig.DEFAULT_BATCH, 1000);
        s.start();
        ch.runPendingTasks();
        assertEquals(8, written(), "a full window, then parked");
        assertEquals(8, flushes.flushes, "each frame its own flush");
        assertEquals(8, s.sent());

        acked.set(3); // receivers saw 0..3: four slots free
        s.wake();
        ch.runPendingTasks();
        assertEquals(12, written());
        assertEquals(12, flushes.flushes);
    }

    @Test
    void aBatchSharesAFlushAndALastPartialBatchIsFlushedToo() {
        sender(10, 4, 1000).start();
        ch.runPendingTasks();
        assertEquals(10, written());
        assertEquals(3, flushes.flushes, "4 + 4 + 2");
    }

    @Test
    void aPassYieldsAfterMaxPassAndTheNextCarriesOn() {
        Sender s = sender(Sender.MAX_PASS + 44, 1, 1000);
        s.start();
        ch.runPendingTasks();
        assertEquals(Sender.MAX_PASS + 44, written());
        assertEquals(Sender.MAX_PASS + 44, flushes.flushes);
    }

    @Test
    void theMessageCapStopsTheSender() {
        Sender s = sender(64, 1, 5);
        s.start();
        ch.runPendingTasks();
        acked.set(4);
        s.wake();
        ch.runPendingTasks();
        assertEquals(5, written());
    }

    @Test
    void writabilityFiredInsideAFlushDoesNotStartASecondPassThatReusesSequences() {
        Sender s = sender(8, 1, 1000);
        flushes.reenter = s;
        s.start();
        ch.runPendingTasks();
        assertEquals(8, written(), "the window, once: no nested pass wrote past it");
        assertEquals(8, s.sent());
    }

    @Test
    void aBatchOutOfRangeIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> sender(8, 0, 10));
        assertThrows(IllegalArgumentException.class, () -> sender(8, Sender.MAX_PASS + 1, 10));
    }
}

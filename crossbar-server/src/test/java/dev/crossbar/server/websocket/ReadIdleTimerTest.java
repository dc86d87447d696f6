package dev.crossbar.server.websocket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The keepalive's clock: reader-idle events while nothing is read, first one marked, reset by a read. */
class ReadIdleTimerTest {

    private static final long INTERVAL_MILLIS = 400;

    @Test
    void firesWhileSilentAndStartsAgainAfterARead() throws Exception {
        List<IdleStateEvent> events = new ArrayList<>();
        EmbeddedChannel ch = new EmbeddedChannel(new ReadIdleTimer(INTERVAL_MILLIS, TimeUnit.MILLISECONDS),
                new ChannelInboundHandlerAdapter() {
                    @Override
                    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                        events.add((IdleStateEvent) evt);
                    }

                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        io.netty.util.ReferenceCountUtil.release(msg);
                    }
                });
        try {
            waitFor(ch, events, 1);
            assertEquals(IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT, events.get(0));
            waitFor(ch, events, 2);
            assertEquals(IdleStateEvent.READER_IDLE_STATE_EVENT, events.get(1));

            // A read: the next silence is a first one again, a whole interval after the read.
            ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {1}));
            long readAt = System.nanoTime();
            waitFor(ch, events, 3);
            assertTrue(System.nanoTime() - readAt >= TimeUnit.MILLISECONDS.toNanos(INTERVAL_MILLIS),
                    "not before an interval has passed since the read");
            assertEquals(IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT, events.get(2));
        } finally {
            ch.finishAndReleaseAll();
        }
        int after = events.size();
        Thread.sleep(2 * INTERVAL_MILLIS);
        ch.runScheduledPendingTasks();
        assertEquals(after, events.size(), "a closed channel's timer is stopped");
    }

    /** Runs the channel's timers until {@code n} events have fired; bounded at 10 intervals. */
    private static void waitFor(EmbeddedChannel ch, List<IdleStateEvent> events, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(10 * INTERVAL_MILLIS);
        while (events.size() < n) {
            assertTrue(System.nanoTime() < deadline, "no idle event " + n + " within 10 intervals");
            Thread.sleep(20);
            ch.runScheduledPendingTasks();
        }
    }
}

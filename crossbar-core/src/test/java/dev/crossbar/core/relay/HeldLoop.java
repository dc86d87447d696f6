package dev.crossbar.core.relay;

import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Holds an event loop busy until released, so that what is queued for it meanwhile is drained together. */
final class HeldLoop {

    private HeldLoop() {
    }

    /** Holds {@code loop} until the latch is counted down (at most 10 s). */
    static CountDownLatch hold(EventExecutor loop) {
        CountDownLatch hold = new CountDownLatch(1);
        loop.execute(() -> {
            try {
                hold.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        return hold;
    }
}

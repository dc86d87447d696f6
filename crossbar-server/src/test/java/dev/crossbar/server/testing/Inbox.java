package dev.crossbar.server.testing;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** Whole messages a test client has received, in order, waited for with a timeout. */
final class Inbox {

    private final BlockingQueue<Received> queue = new LinkedBlockingQueue<>();
    /** Extra words for a timeout's failure message (e.g. how the connection ended); may return "". */
    private final Supplier<String> context;

    Inbox(Supplier<String> context) {
        this.context = context;
    }

    void add(Received r) {
        queue.add(r);
    }

    /** The next message, or an AssertionError after {@code timeout}. */
    Received take(Duration timeout) {
        try {
            Received r = queue.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (r == null) {
                throw new AssertionError("no message within " + timeout + context.get());
            }
            return r;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted");
        }
    }

    /** The next message if one arrives within {@code timeout}, else null. */
    Received poll(Duration timeout) throws InterruptedException {
        return queue.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    int size() {
        return queue.size();
    }
}

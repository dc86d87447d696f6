package dev.crossbar.bench.jmh;

import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * JMH's worker threads as Netty's {@code FastThreadLocalThread}s, which the relay's event loops
 * are: on any other thread Netty 4.2's {@code Recycler} pools nothing (every outbound-buffer entry
 * and pooled duplicate is a new object) and the adaptive allocator has no thread-local cache, so a
 * benchmark of Netty's write path on a plain thread measures allocation the relay does not do.
 * Selected with {@code -Djmh.executor=CUSTOM -Djmh.executor.class=} this class, as Netty's own
 * microbenchmarks do ({@code AbstractMicrobenchmark.HarnessExecutor}).
 */
public final class FastThreadLocalExecutor extends ThreadPoolExecutor {

    /** The constructor JMH calls for a custom executor. */
    public FastThreadLocalExecutor(int maxThreads, String prefix) {
        super(maxThreads, maxThreads, 0L, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                new DefaultThreadFactory(prefix, true));
    }
}

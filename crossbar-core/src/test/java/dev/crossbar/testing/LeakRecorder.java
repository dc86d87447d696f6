package dev.crossbar.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns Netty's LEAK reports into data a test can fail on. Installed as the process-wide
 * {@link ResourceLeakDetectorFactory} before any buffer class loads (see
 * {@link LeakCheckSessionListener}); Netty's own log line is still written.
 */
public final class LeakRecorder extends ResourceLeakDetectorFactory {

    private static final List<String> LEAKS = new ArrayList<>();
    private static volatile boolean installed;

    private LeakRecorder() {
    }

    /** Installs the recorder once; later calls do nothing. */
    public static synchronized void install() {
        if (!installed) {
            ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new LeakRecorder());
            installed = true;
        }
    }

    public static boolean isInstalled() {
        return installed;
    }

    /** Leak reports recorded since the last call, then forgets them. */
    public static synchronized List<String> drain() {
        List<String> copy = new ArrayList<>(LEAKS);
        LEAKS.clear();
        return copy;
    }

    /** How many reports are waiting for {@link #drain()}. */
    public static synchronized int pending() {
        return LEAKS.size();
    }

    /** Calls {@link #collect()} until a report is pending, at most {@code rounds} times; true if one is. */
    public static boolean collectUntilReported(int rounds) {
        for (int i = 0; i < rounds && pending() == 0; i++) {
            collect();
        }
        return pending() > 0;
    }

    private static synchronized void record(String report) {
        LEAKS.add(report);
    }

    /**
     * Makes Netty look for leaks now: collects garbage, then allocates tracked buffers, because a
     * detector only reports what the GC found when it next tracks an object.
     */
    public static void collect() {
        for (int i = 0; i < 5; i++) {
            System.gc();
            System.runFinalization();
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            for (ByteBufAllocator alloc : new ByteBufAllocator[] {
                    PooledByteBufAllocator.DEFAULT, UnpooledByteBufAllocator.DEFAULT, ByteBufAllocator.DEFAULT}) {
                ByteBuf probe = alloc.directBuffer(1);
                probe.release();
                probe = alloc.heapBuffer(1);
                probe.release();
            }
        }
    }

    @Override
    @SuppressWarnings("deprecation")
    public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval, long maxActive) {
        return new Detector<>(resource, samplingInterval);
    }

    private static final class Detector<T> extends ResourceLeakDetector<T> {

        Detector(Class<T> resource, int samplingInterval) {
            super(resource, samplingInterval);
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            super.reportTracedLeak(resourceType, records);
            record("LEAK: " + resourceType + records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            super.reportUntracedLeak(resourceType);
            record("LEAK: " + resourceType + " (untraced)");
        }
    }
}

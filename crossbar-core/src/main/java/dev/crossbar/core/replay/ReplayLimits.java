package dev.crossbar.core.replay;

import dev.crossbar.core.route.StreamOptions;

/**
 * Bounds on what one topic remembers, per kind, and the memory a topic's options call for.
 *
 * @param lastValues     {@code start=last}: publishers whose last message is kept
 * @param lastValueBytes {@code start=last}: bytes kept in all
 * @param keyframeBytes  {@code start=keyframe}: bytes kept per publisher since its last keyframe
 */
public record ReplayLimits(int lastValues, long lastValueBytes, long keyframeBytes) {

    public static final int DEFAULT_LAST_VALUES = 64;
    public static final long DEFAULT_LAST_VALUE_BYTES = 1024 * 1024;
    public static final long DEFAULT_KEYFRAME_BYTES = dev.crossbar.core.video.GopBuffer.DEFAULT_MAX_BYTES;

    public static final ReplayLimits DEFAULT =
            new ReplayLimits(DEFAULT_LAST_VALUES, DEFAULT_LAST_VALUE_BYTES, DEFAULT_KEYFRAME_BYTES);

    public ReplayLimits {
        if (lastValues < 1 || lastValueBytes < 1 || keyframeBytes < 1) {
            throw new IllegalArgumentException("replay limits must be > 0");
        }
    }

    /** The memory a topic with {@code options} keeps, or null when it keeps none. */
    public StreamMemory memoryFor(StreamOptions options) {
        switch (options.start()) {
            case LAST:
                return new LastValues(lastValues, lastValueBytes);
            case KEYFRAME:
                return new KeyframeMemory(keyframeBytes);
            default:
                return null;
        }
    }
}

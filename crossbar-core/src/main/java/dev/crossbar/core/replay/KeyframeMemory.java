package dev.crossbar.core.replay;

import dev.crossbar.core.video.GopBuffer;
import dev.crossbar.core.video.RandomAccessTracker;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code start=keyframe}: per publisher, a {@link RandomAccessTracker} following its MPEG-TS stream
 * and a {@link GopBuffer} holding the messages since its last keyframe, which a newcomer gets first.
 *
 * <p>Binary messages only: a text message on a video stream is relayed live and never kept (it is
 * not part of the transport stream, and a replay must not change its type). Messages from other
 * nodes share one tracker ({@link StreamMemory#REMOTE}): one remote camera per topic is followed
 * exactly; several would interleave.
 *
 * <p>Ownership: the buffers hold their own slices (see {@link GopBuffer}); {@link #replay} returns
 * references the caller releases.
 */
public final class KeyframeMemory implements StreamMemory {

    private final int maxBytes;
    private final Map<Object, Stream> streams = new LinkedHashMap<>();

    public KeyframeMemory(long maxBytes) {
        this.maxBytes = (int) Math.min(maxBytes, Integer.MAX_VALUE - 1024);
    }

    private static final class Stream {
        final RandomAccessTracker tracker = new RandomAccessTracker();
        final GopBuffer gop;

        Stream(int maxBytes) {
            gop = new GopBuffer(maxBytes);
        }
    }

    /**
     * Returns where in this message a receiver skipped forward may start: the keyframe's packet
     * when it begins in this message; 0 for every message of a stream that is not MPEG-TS, or in
     * which no keyframe has been found (a codec whose keyframes cannot be told, or none yet): any
     * message is a start there, so a receiver that fell behind goes on from the newest rather than
     * wait, dark, for a keyframe that may never be recognised; -1 otherwise, including a keyframe
     * whose packet began in an earlier message (a skip then goes to another keyframe).
     */
    @Override
    public int record(Object publisher, boolean text, ByteBuf payload) {
        if (text) {
            return -1;
        }
        Stream s = streams.computeIfAbsent(publisher, p -> new Stream(maxBytes));
        int offset = s.tracker.feed(payload);
        s.gop.add(payload, offset);
        if (s.tracker.state() == RandomAccessTracker.State.NOT_MPEG_TS || s.tracker.randomAccessPoints() == 0) {
            return 0;
        }
        return offset == RandomAccessTracker.NONE || offset < 0 ? -1 : offset;
    }

    @Override
    public void forget(Object publisher) {
        Stream s = streams.remove(publisher);
        if (s != null) {
            s.gop.release();
        }
    }

    @Override
    public List<Replayed> replay() {
        List<Replayed> out = new ArrayList<>();
        for (Stream s : streams.values()) {
            for (ByteBuf b : s.gop.replay()) {
                out.add(new Replayed(false, b));
            }
        }
        return out;
    }

    @Override
    public void release() {
        for (Stream s : streams.values()) {
            s.gop.release();
        }
        streams.clear();
    }

    /**
     * {@code format}: {@code mpeg-ts}, {@code not-mpeg-ts} or {@code unknown} (too little seen; with
     * several publishers, the first's that has decided); {@code messages}, {@code bytes} held;
     * {@code gopAgeSeconds} of the oldest group held (null when none); {@code overflows}.
     */
    @Override
    public Map<String, Object> describe(long nowNanos) {
        String format = "unknown";
        int messages = 0;
        long bytes = 0;
        long overflows = 0;
        long oldest = -1;
        for (Stream s : streams.values()) {
            if (format.equals("unknown") && s.tracker.state() != RandomAccessTracker.State.UNKNOWN) {
                format = s.tracker.state().name().toLowerCase(Locale.ROOT).replace('_', '-');
            }
            messages += s.gop.messages();
            bytes += s.gop.bytes();
            overflows += s.gop.overflows();
            if (s.gop.messages() > 0) {
                oldest = Math.max(oldest, s.gop.ageNanos(nowNanos));
            }
        }
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("format", format);
        d.put("messages", messages);
        d.put("bytes", bytes);
        d.put("gopAgeSeconds", oldest < 0 ? null : Math.round(oldest / 1e7) / 100.0);
        d.put("overflows", overflows);
        return d;
    }
}

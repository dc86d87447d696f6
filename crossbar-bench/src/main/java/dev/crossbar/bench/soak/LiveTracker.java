package dev.crossbar.bench.soak;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * One live receiver's connection: checks each message whole, and per sender's connection that the
 * numbers only grow, recording what was skipped as missing on the receiver's node. Called by one
 * thread at a time (the connection's listener).
 */
final class LiveTracker implements Ws.Sink {

    private final Ledger ledger;
    private final Ledger.Flow flow;
    private final int node;
    /** Per sender's connection ({@link Label#stream()} and {@link Label#epoch()}): the number expected next. */
    private final Map<Long, Long> expected = new HashMap<>();

    LiveTracker(Ledger ledger, Ledger.Flow flow, int node) {
        this.ledger = ledger;
        this.flow = flow;
        this.node = node;
    }

    /**
     * Order holds per sender's connection only: after a publisher reconnects (to the other node,
     * say), what it sent on its old connection may still be on its way by another path.
     */
    @Override
    public void message(byte[] payload, boolean text) {
        Label l = flow == ledger.video || flow == ledger.rawVideo ? (text ? null : VideoFrames.read(payload))
                : (text ? DataTexts.read(new String(payload, StandardCharsets.UTF_8)) : null);
        if (l == null) {
            ledger.corrupt(flow, node, payload, text);
            return;
        }
        flow.received.incrementAndGet();
        long key = ((long) l.stream() << 32) | l.epoch();
        Long next = expected.put(key, l.seq() + 1);
        if (next == null) {
            return; // the first from this connection: a stream starts where the receiver came in
        }
        if (l.seq() < next) {
            flow.disorder.incrementAndGet();
            expected.put(key, next);
        } else if (l.seq() > next) {
            ledger.missing(flow, node, l, next, l.seq());
        }
    }
}

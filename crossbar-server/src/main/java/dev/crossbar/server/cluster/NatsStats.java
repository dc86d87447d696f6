package dev.crossbar.server.cluster;

import java.util.concurrent.atomic.LongAdder;

/**
 * What one node's NATS link has carried and lost, for {@code /metrics} and {@code /stats}.
 *
 * <p>Counters only grow. The metric names below are the ones to register (as counters, except
 * {@link #STATE} and {@link #PENDING_BYTES}, which are gauges read live from the broker); none takes
 * a topic as a tag. "Messages" are relayed WebSocket messages, however many NATS messages (chunks)
 * each took.
 */
public final class NatsStats {

    public static final String MESSAGES_OUT = "crossbar.nats.messages.out";
    public static final String BYTES_OUT = "crossbar.nats.bytes.out";
    public static final String MESSAGES_IN = "crossbar.nats.messages.in";
    public static final String BYTES_IN = "crossbar.nats.bytes.in";
    public static final String DROPPED_OUT = "crossbar.nats.dropped.out";
    public static final String DROPPED_IN = "crossbar.nats.dropped.in";
    public static final String LOST_IN = "crossbar.nats.lost.in";
    public static final String DUPLICATES_IN = "crossbar.nats.duplicates.in";
    public static final String REJECTED_IN = "crossbar.nats.rejected.in";
    public static final String RECONNECTS = "crossbar.nats.reconnects";
    /** Lossless streams: messages this node sent again because a receiving node missed them. */
    public static final String RESENT = "crossbar.nats.lossless.resent";
    /** Lossless streams: messages this node found lost for good (its verdicts). */
    public static final String LOSSLESS_LOST = "crossbar.nats.lossless.lost";
    /** Lossless streams: times this node closed a stream's clients for messages lost for good. */
    public static final String BROKEN = "crossbar.nats.lossless.broken";
    /** Gauge: bytes of lossless messages kept until the receiving nodes acknowledge them. */
    public static final String HELD_BYTES = "crossbar.nats.lossless.held.bytes";
    /** Gauge: 1 while connected, 0 otherwise. */
    public static final String STATE = "crossbar.nats.connected";
    /** Gauge: bytes waiting to be sent to NATS. */
    public static final String PENDING_BYTES = "crossbar.nats.pending.bytes";

    private final LongAdder messagesOut = new LongAdder();
    private final LongAdder bytesOut = new LongAdder();
    private final LongAdder messagesIn = new LongAdder();
    private final LongAdder bytesIn = new LongAdder();
    private final LongAdder droppedOut = new LongAdder();
    private final LongAdder droppedIn = new LongAdder();
    private final LongAdder lostIn = new LongAdder();
    private final LongAdder duplicatesIn = new LongAdder();
    private final LongAdder rejectedIn = new LongAdder();
    private final LongAdder reconnects = new LongAdder();
    private final LongAdder resent = new LongAdder();
    private final LongAdder losslessLost = new LongAdder();
    private final LongAdder broken = new LongAdder();

    void recordSent(int payloadBytes) {
        messagesOut.increment();
        bytesOut.add(payloadBytes);
    }

    void recordReceived(int payloadBytes) {
        messagesIn.increment();
        bytesIn.add(payloadBytes);
    }

    void recordDroppedOut() {
        droppedOut.increment();
    }

    void recordDroppedIn() {
        droppedIn.increment();
    }

    void recordLost(long messages) {
        lostIn.add(messages);
    }

    void recordDuplicate() {
        duplicatesIn.increment();
    }

    void recordRejected() {
        rejectedIn.increment();
    }

    void recordReconnect() {
        reconnects.increment();
    }

    void recordResent(long messages) {
        resent.add(messages);
    }

    void recordLosslessLost(long messages) {
        losslessLost.add(messages);
    }

    void recordBroken() {
        broken.increment();
    }

    /** Messages this node published to NATS. */
    public long messagesOut() {
        return messagesOut.sum();
    }

    /** Payload bytes of those messages (envelopes not counted). */
    public long bytesOut() {
        return bytesOut.sum();
    }

    /** Whole messages from other nodes handed to local fan-out. */
    public long messagesIn() {
        return messagesIn.sum();
    }

    public long bytesIn() {
        return bytesIn.sum();
    }

    /** Messages not published: the pending bound was full, NATS refused them, or they could not be chunked. */
    public long droppedOut() {
        return droppedOut.sum();
    }

    /** Messages from other nodes refused here: larger than this node's maximum, or no room to reassemble. */
    public long droppedIn() {
        return droppedIn.sum();
    }

    /** Messages from other nodes that never arrived whole, from gaps in their streams' sequence numbers. */
    public long lostIn() {
        return lostIn.sum();
    }

    /** Messages from other nodes seen a second time and dropped. */
    public long duplicatesIn() {
        return duplicatesIn.sum();
    }

    /** NATS messages on Crossbar subjects that were not valid envelopes, or named another topic. */
    public long rejectedIn() {
        return rejectedIn.sum();
    }

    /** Times the link came back after being lost. */
    public long reconnects() {
        return reconnects.sum();
    }

    /** Lossless streams: messages sent again because a receiving node missed them. */
    public long resent() {
        return resent.sum();
    }

    /** Lossless streams: messages this node found lost for good, and said so (closing the stream's clients). */
    public long losslessLost() {
        return losslessLost.sum();
    }

    /** Lossless streams: times this node closed a stream's clients because messages were lost for good. */
    public long broken() {
        return broken.sum();
    }
}

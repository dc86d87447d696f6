package dev.crossbar.server.cluster;

import static java.util.Objects.requireNonNull;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.ToLongFunction;

/**
 * The cluster link's meters ({@code crossbar.nats.*}), read live from the broker: nothing is
 * counted twice and nothing is tagged by topic.
 */
public final class NatsMetrics implements MeterBinder {

    private final NatsBroker broker;

    public NatsMetrics(NatsBroker broker) {
        this.broker = requireNonNull(broker, "broker");
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        NatsStats s = broker.stats();
        counter(registry, NatsStats.MESSAGES_OUT, s, NatsStats::messagesOut, "Messages published to NATS");
        counter(registry, NatsStats.BYTES_OUT, s, NatsStats::bytesOut, "Payload bytes published to NATS");
        counter(registry, NatsStats.MESSAGES_IN, s, NatsStats::messagesIn, "Messages received from NATS");
        counter(registry, NatsStats.BYTES_IN, s, NatsStats::bytesIn, "Payload bytes received from NATS");
        counter(registry, NatsStats.DROPPED_OUT, s, NatsStats::droppedOut,
                "Messages not published: the link's queue was full");
        counter(registry, NatsStats.DROPPED_IN, s, NatsStats::droppedIn,
                "Messages from NATS refused: larger than this node's limit");
        counter(registry, NatsStats.LOST_IN, s, NatsStats::lostIn, "Messages from other nodes known lost (sequence gaps)");
        counter(registry, NatsStats.DUPLICATES_IN, s, NatsStats::duplicatesIn, "Duplicate messages from NATS discarded");
        counter(registry, NatsStats.REJECTED_IN, s, NatsStats::rejectedIn, "Malformed messages from NATS discarded");
        counter(registry, NatsStats.RECONNECTS, s, NatsStats::reconnects, "Reconnections to NATS");
        counter(registry, NatsStats.RESENT, s, NatsStats::resent, "Lossless messages sent again to nodes that missed them");
        counter(registry, NatsStats.LOSSLESS_LOST, s, NatsStats::losslessLost, "Lossless messages this node found lost for good");
        counter(registry, NatsStats.BROKEN, s, NatsStats::broken, "Times a lossless stream's clients here were closed (4010)");
        Gauge.builder(NatsStats.STATE, broker, b -> b.degradedReason() == null ? 1 : 0)
                .description("1 while the NATS link is up, 0 while degraded").register(registry);
        Gauge.builder(NatsStats.PENDING_BYTES, broker, NatsBroker::pendingBytes)
                .description("Bytes queued for NATS by this node").register(registry);
        Gauge.builder(NatsStats.HELD_BYTES, broker, NatsBroker::losslessHeldBytes)
                .description("Bytes of lossless messages kept until other nodes acknowledge them").register(registry);
    }

    private static void counter(MeterRegistry registry, String name, NatsStats stats, ToLongFunction<NatsStats> read,
                                String description) {
        FunctionCounter.builder(name, stats, st -> read.applyAsLong(st)).description(description).register(registry);
    }
}

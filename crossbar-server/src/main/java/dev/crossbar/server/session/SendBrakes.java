package dev.crossbar.server.session;

import static java.util.Objects.requireNonNull;

import dev.crossbar.core.route.SendLimits;
import dev.crossbar.core.route.StreamOptions;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.concurrent.atomic.LongAdder;

/**
 * Picks each sender's {@link SendBrake} when it joins, from its stream's rule and the relay's
 * defaults ({@code --rate-limit}, {@code --rate-burst}, {@code --bandwidth-limit},
 * {@code --over-limit}), and counts what the limits cost: messages dropped, connections closed.
 * One per configuration (a reload makes a new one with the same counts).
 */
public final class SendBrakes {

    /** Counter: messages over their sender's limit, tagged {@code action=dropped|closed}. */
    public static final String OVER_LIMIT = "crossbar.messages.over.limit";

    /** What the limits have cost since start; shared by every configuration's {@link SendBrakes}. */
    public static final class Counts implements MeterBinder {
        final LongAdder dropped = new LongAdder();
        final LongAdder closed = new LongAdder();

        public long dropped() {
            return dropped.sum();
        }

        /** Connections closed (1008) for going over their limit. */
        public long closed() {
            return closed.sum();
        }

        @Override
        public void bindTo(MeterRegistry registry) {
            FunctionCounter.builder(OVER_LIMIT, this, Counts::dropped).tag("action", "dropped")
                    .description("Messages over their sender's rate or bandwidth limit, dropped").register(registry);
            FunctionCounter.builder(OVER_LIMIT, this, Counts::closed).tag("action", "closed")
                    .description("Senders closed (1008) for going over their rate or bandwidth limit").register(registry);
        }
    }

    private final SendLimits defaults;
    private final Counts counts;

    public SendBrakes(SendLimits defaults, Counts counts) {
        this.defaults = requireNonNull(defaults, "defaults");
        this.counts = requireNonNull(counts, "counts");
    }

    /** The limits a sender on a stream with {@code options} has: the rule's keys, the rest from the defaults. */
    SendLimits limitsFor(StreamOptions options) {
        return options.limits().withDefaults(defaults);
    }

    /** The brake of a connection on a stream with these limits; none for one that cannot send. */
    SendBrake brakeFor(SendLimits limits, boolean canSend, long nowNanos) {
        return canSend && limits.limits() ? new TokenBrake(limits, nowNanos) : SendBrake.NONE;
    }

    Counts counts() {
        return counts;
    }
}

package dev.crossbar.server.health;

import static java.util.Objects.requireNonNull;

import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The liveness probe's meters, one set per event loop (tag {@code loop}: its index, a set as small
 * as the loop count): latency of each probe from sending to delivery on its loop, the latest one,
 * and how long ago the loop last delivered one.
 */
public final class LoopHealthMetrics implements MeterBinder {

    public static final String PROBE_LATENCY = "crossbar.health.probe.latency";
    public static final String PROBE_LAST_LATENCY = "crossbar.health.probe.latency.last";
    public static final String PROBE_AGE = "crossbar.health.probe.age";

    /** Held here: Micrometer holds the objects behind gauges weakly. */
    private final List<LoopHealth.Probe> probes;

    public LoopHealthMetrics(LoopHealth health) {
        this.probes = List.copyOf(requireNonNull(health, "health").probes());
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (LoopHealth.Probe p : probes) {
            String loop = Integer.toString(p.loop());
            FunctionTimer.builder(PROBE_LATENCY, p, LoopHealth.Probe::delivered, LoopHealth.Probe::totalLatencyNanos,
                            TimeUnit.NANOSECONDS).tag("loop", loop)
                    .description("Liveness probes through the fan-out to this event loop: sent to delivered")
                    .register(registry);
            Gauge.builder(PROBE_LAST_LATENCY, p, q -> q.lastLatencyNanos() / 1e9).tag("loop", loop).baseUnit("seconds")
                    .description("Latency of the latest liveness probe delivered on this event loop").register(registry);
            Gauge.builder(PROBE_AGE, p, LoopHealth.Probe::ageSeconds).tag("loop", loop).baseUnit("seconds")
                    .description("Time since this event loop last delivered a liveness probe (/healthz: 503 over the limit)")
                    .register(registry);
        }
    }
}

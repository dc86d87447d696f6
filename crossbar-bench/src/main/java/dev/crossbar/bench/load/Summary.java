package dev.crossbar.bench.load;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Medians and spread (min, max) of repeated runs of one configuration: one noisy run on a shared
 * two-core machine says little, the median of several says more, and the spread says how much.
 */
final class Summary {

    /** The figures summarised; others (counts of the run's setup) are copied from the first run. */
    static final List<String> METRICS = List.of(
            "msgPerS", "perReceiverMsgPerS", "egressMbitS", "meanUs", "p50Us", "p90Us", "p99Us", "p999Us", "maxUs",
            "lost", "lossPct", "mergedFrames", "mergedMessages", "reordered", "duplicates", "corrupt", "errors",
            "relayCpuS", "relayCpuPct", "cpuSPerGB", "cpuSPerMillionMsgs", "relayPeakRssMB", "clientCpuS", "stalledS",
            "slowReceived", "connectS", "relayRssMB", "rssPerConnKB", "heapMB", "heapPerConnB", "stillOpen",
            "firstConnectMs", "firstRelayMs", "firstRelayLost", "p99First10sUs", "sentPerS", "sendPacePct");

    /** Keys describing the configuration, copied from the first run. */
    static final List<String> CONFIG = List.of(
            "label", "scenario", "relay", "spawnSession", "slow", "topic", "url", "size", "rate", "window", "batch", "warmupS", "durationS",
            "receivers", "clients", "connections", "groups", "connectRate", "dataTopics", "stalled");

    private Summary() {
    }

    static RunResult of(List<RunResult> runs) {
        if (runs.isEmpty()) {
            throw new IllegalArgumentException("runs: empty (expected: at least one)");
        }
        RunResult first = runs.get(0);
        RunResult s = new RunResult().put("kind", "summary");
        for (String k : CONFIG) {
            s.put(k, first.get(k));
        }
        s.put("runs", runs.size());
        for (String k : metrics(first)) {
            List<Double> values = new ArrayList<>();
            for (RunResult r : runs) {
                Double v = r.number(k);
                if (v != null) {
                    values.add(v);
                }
            }
            if (!values.isEmpty()) {
                double[] a = values.stream().mapToDouble(Double::doubleValue).toArray();
                s.put(k, median(a)).put(k + "Min", min(a)).put(k + "Max", max(a));
            }
        }
        return s;
    }

    /** {@link #METRICS}, then the figures of each part of a run of several ({@code video.p99Us}, ...). */
    private static List<String> metrics(RunResult first) {
        List<String> keys = new ArrayList<>(METRICS);
        for (String k : first.values().keySet()) {
            if (k.indexOf('.') > 0 && first.number(k) != null) {
                keys.add(k);
            }
        }
        return keys;
    }

    /** Median; the mean of the middle two for an even count. */
    static double median(double[] values) {
        double[] a = values.clone();
        Arrays.sort(a);
        int n = a.length;
        return n % 2 == 1 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
    }

    private static double min(double[] a) {
        return Arrays.stream(a).min().orElseThrow();
    }

    private static double max(double[] a) {
        return Arrays.stream(a).max().orElseThrow();
    }
}

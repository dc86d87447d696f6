package dev.crossbar.bench.soak;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.crossbar.bench.load.ProcStats;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads what the nodes counted (every 5 s, summed across their restarts: a restarted node counts from
 * zero) and what each process costs, and writes a row a minute: the soak's figures.
 *
 * <p>What the nodes count as lost for live streams: {@code crossbar_nats_dropped_out_total} (a node
 * could not hand a message to NATS), {@code crossbar_nats_lost_in_total} (a node found a message of
 * another node's missing), {@code crossbar_nats_dropped_in_total}, and {@code
 * crossbar_messages_dropped_total} (a receiver too slow, or a message older than the stream's
 * max-latency), less what the stalled viewer's topic dropped (the soak does not count its misses).
 */
final class Counters {

    static final List<String> LIVE_LOSSES = List.of("crossbar_nats_dropped_out_total", "crossbar_nats_lost_in_total",
            "crossbar_nats_dropped_in_total", "crossbar_messages_dropped_total");
    static final List<String> LOSSLESS = List.of("crossbar_nats_lossless_resent_total",
            "crossbar_nats_lossless_lost_total", "crossbar_nats_lossless_broken_total", "crossbar_nats_duplicates_in_total",
            "crossbar_nats_reconnects_total");
    static final String STALLED_TOPIC = "/out/cam/stalled";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Soak.Cluster cluster;
    private final NatsPair nats;
    private final PrintWriter rows;
    /** Per node and counter: the value at the last reading, and the start it was read in. */
    private final Map<String, double[]> last = new HashMap<>();
    /** Per counter: the sum over both nodes and all their starts. */
    private final Map<String, Double> totals = new LinkedHashMap<>();
    /** CPU seconds per process at the last row, and that row's time. */
    private final Map<String, Double> cpuAtRow = new HashMap<>();
    private final Map<String, Long> pidAtRow = new HashMap<>();
    private long rowNanos = System.nanoTime();
    private long rowLiveMissing;
    private double rowLiveCounted;

    Counters(Soak.Cluster cluster, NatsPair nats, PrintWriter rows) {
        this.cluster = cluster;
        this.nats = nats;
        this.rows = rows;
        for (String k : LIVE_LOSSES) {
            totals.put(k, 0.0);
        }
        for (String k : LOSSLESS) {
            totals.put(k, 0.0);
        }
        totals.put("stalled topic dropped", 0.0);
    }

    synchronized void sample() {
        try {
            for (int i = 0; i < 2; i++) {
                Node n = cluster.node(i);
                if (!n.alive()) {
                    continue;
                }
                Map<String, Double> c = n.counters();
                if (c.isEmpty()) {
                    continue;
                }
                for (String k : totals.keySet()) {
                    double v = k.equals("stalled topic dropped") ? (i == 1 ? n.topicDropped(STALLED_TOPIC) : -1)
                            : c.getOrDefault(k, 0.0);
                    if (v >= 0) {
                        add(n.name + " " + k, k, v, n.starts());
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Adds to {@code total} what {@code key} grew by since its last reading (all of it after a restart or a reset). */
    private void add(String key, String total, double value, int start) {
        double[] prev = last.get(key);
        double grew = prev == null || prev[1] != start || value < prev[0] ? value : value - prev[0];
        last.put(key, new double[] {value, start});
        totals.merge(total, grew, Double::sum);
    }

    /** What the nodes counted as lost on live streams, the stalled viewer's topic left out. */
    synchronized double liveCounted() {
        double sum = 0;
        for (String k : LIVE_LOSSES) {
            sum += totals.get(k);
        }
        return sum - totals.get("stalled topic dropped");
    }

    private long liveMissing() {
        Ledger l = cluster.ledger();
        return l.video.missing.get() + l.data.missing.get();
    }

    /** Writes one minute's row. */
    synchronized void row() {
        sample(); // the counters as of now, beside what the clients saw by now
        long now = System.nanoTime();
        double seconds = (now - rowNanos) / 1e9;
        rowNanos = now;
        Ledger l = cluster.ledger();
        ObjectNode r = JSON.createObjectNode();
        r.put("minute", Math.round(cluster.minutes() * 10) / 10.0);
        StringBuilder line = new StringBuilder(String.format("minute %5.1f:", cluster.minutes()));
        Map<String, Long> pids = new LinkedHashMap<>();
        for (int i = 0; i < 2; i++) {
            Node n = cluster.node(i);
            if (n.alive()) {
                pids.put(n.name, n.pid());
            }
        }
        for (int i = 0; i < 2; i++) {
            pids.put("nats-" + i, nats.pid(i));
        }
        for (Map.Entry<String, Long> p : pids.entrySet()) {
            try {
                ProcStats s = ProcStats.read(String.valueOf(p.getValue()));
                Double before = p.getValue().equals(pidAtRow.get(p.getKey())) ? cpuAtRow.get(p.getKey()) : null;
                double cpu = before == null ? Double.NaN : (s.cpuSeconds() - before) / seconds * 100;
                cpuAtRow.put(p.getKey(), s.cpuSeconds());
                pidAtRow.put(p.getKey(), p.getValue());
                ObjectNode o = r.putObject(p.getKey());
                o.put("rssMiB", Math.round(s.rssKb() / 102.4) / 10.0);
                o.put("cpuPercent", Double.isNaN(cpu) ? null : Math.round(cpu * 10) / 10.0);
                line.append(String.format(" %s %.0f MiB %s%%", p.getKey(), s.rssKb() / 1024.0,
                        Double.isNaN(cpu) ? "-" : String.format("%.0f", cpu)));
            } catch (IOException gone) {
                line.append(" ").append(p.getKey()).append(" down");
            }
        }
        long missing = liveMissing();
        double counted = liveCounted();
        flow(r.putObject("video"), l.video);
        flow(r.putObject("data"), l.data);
        r.put("liveMissingThisMinute", missing - rowLiveMissing);
        r.put("liveCountedThisMinute", Math.round(counted - rowLiveCounted));
        rowLiveMissing = missing;
        rowLiveCounted = counted;
        ObjectNode f = r.putObject("files");
        f.put("complete", l.filesComplete.get());
        f.put("cut", l.filesCut.get());
        f.put("told", l.filesTold.get());
        f.put("broken", l.filesBroken.get());
        f.put("silent", l.filesSilent.get());
        ObjectNode t = r.putObject("counted");
        totals.forEach((k, v) -> t.put(k, Math.round(v)));
        r.put("silentHoles", silentHoles());
        rows.println(r);
        rows.flush();
        line.append(String.format("; video %d sent %d got %d missing; data %d sent %d got %d missing; counted %.0f;"
                        + " files %d complete %d cut %d told %d broken %d silent; silent holes %d",
                l.video.sent.get(), l.video.received.get(), l.video.missing.get(), l.data.sent.get(), l.data.received.get(),
                l.data.missing.get(), counted, l.filesComplete.get(), l.filesCut.get(), l.filesTold.get(),
                l.filesBroken.get(), l.filesSilent.get(), silentHoles()));
        cluster.log(line.toString());
    }

    private static void flow(ObjectNode o, Ledger.Flow f) {
        o.put("sent", f.sent.get());
        o.put("received", f.received.get());
        o.put("missing", f.missing.get());
        o.put("disorder", f.disorder.get());
        o.put("corrupt", f.corrupt.get());
    }

    /** Live messages missing beyond what the nodes counted, files left silent, anything corrupt or out of order. */
    long silentHoles() {
        Ledger l = cluster.ledger();
        return Math.max(0, Math.round(liveMissing() - liveCounted())) + l.filesSilent.get()
                + l.video.corrupt.get() + l.data.corrupt.get() + l.video.disorder.get() + l.data.disorder.get();
    }

    /** Prints the whole soak's figures; returns the silent holes found. */
    synchronized int summary() {
        Ledger l = cluster.ledger();
        cluster.log("summary: counters over both nodes and all their starts: " + totals);
        cluster.log("summary: how connections ended (besides leaving on purpose): " + l.endings());
        for (String c : l.corruptSamples()) {
            cluster.log("summary: a corrupt message: " + c);
        }
        long holes = silentHoles();
        cluster.log(String.format("summary: live messages missing %d (video %d, data %d), counted lost by the nodes %.0f;"
                        + " out of order %d, corrupt %d; files: %d complete, %d cut, %d told, %d broken, %d silent;"
                        + " file messages received %d; SILENT HOLES %d", liveMissing(), l.video.missing.get(),
                l.data.missing.get(), liveCounted(), l.video.disorder.get() + l.data.disorder.get(),
                l.video.corrupt.get() + l.data.corrupt.get(), l.filesComplete.get(), l.filesCut.get(), l.filesTold.get(),
                l.filesBroken.get(), l.filesSilent.get(), l.fileMessages.get(), holes));
        return (int) Math.min(Integer.MAX_VALUE, holes);
    }
}

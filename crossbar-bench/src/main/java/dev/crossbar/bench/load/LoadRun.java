package dev.crossbar.bench.load;

import static java.util.Objects.requireNonNull;

import io.netty.channel.Channel;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import java.io.IOException;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.HdrHistogram.Histogram;

/**
 * One run of one scenario against one relay: connect, settle, warm up, measure, drain, close, and
 * report. Every phase has a deadline from the {@link LoadConfig}, so a relay that stalls (or never
 * answers) ends the run on time rather than hanging it.
 *
 * <p>Throughput and the relay's CPU are measured over the measurement window only; latency counts
 * every message sent in that window, wherever it arrived; integrity counts every message of the
 * run, warm-up included, after the drain. A run of several parts (mixed) reports each part's
 * figures too, prefixed with its name ({@code video.p99Us}). Before its own connections, a
 * traffic run measures how soon the relay relays a first message ({@link FirstContact}).
 */
final class LoadRun {

    /** Main-thread sampling period for progress (stall detection, drain). */
    static final long POLL_MILLIS = 50;
    /** Closing every connection may take this long before the run gives up waiting. */
    static final long CLOSE_TIMEOUT_MILLIS = 5_000;

    private final LoadConfig config;
    private final Relay relay;
    private final int runIndex;
    private final String topic;
    /** The run's streams and topics; null for idle, which sends nothing. */
    private final Plan plan;
    private final RunClock clock = new RunClock();
    private final AtomicLong errors = new AtomicLong();

    LoadRun(LoadConfig config, Relay relay, int runIndex) {
        this.config = requireNonNull(config, "config");
        this.relay = requireNonNull(relay, "relay");
        this.runIndex = runIndex;
        // A fresh topic per run: a late message from an earlier run can never be counted here.
        this.topic = config.topic() + "-" + runIndex + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
        this.plan = config.scenario().sends() ? Plan.of(config, topic) : null;
    }

    RunResult run() throws IOException, InterruptedException {
        ProcSampler sampler = relay.pid() > 0 ? new ProcSampler(relay.pid()) : null;
        try (BenchClient client = new BenchClient(config.clientThreads(), config.bindAddresses())) {
            RunResult r = header();
            if (config.scenario() == Scenario.IDLE) {
                idle(client, sampler, r);
            } else {
                traffic(client, sampler, r);
            }
            return r;
        } finally {
            if (sampler != null) {
                sampler.close();
            }
        }
    }

    private RunResult header() {
        LoadConfig c = config;
        RunResult r = new RunResult()
                .put("kind", "run")
                .put("label", c.label())
                .put("scenario", c.scenario().label())
                .put("relay", relay.kind())
                .put("spawnSession", relay.session())
                .put("url", relay.baseUri().toString())
                .put("topic", c.topic())
                .put("run", runIndex)
                .put("slow", c.slow() == null ? null : c.slow().label())
                .put("time", Instant.now().toString());
        if (c.scenario().sends()) {
            r.put("size", c.size()).put("rate", c.rate()).put("window", c.window()).put("batch", c.batch())
                    .put("warmupS", c.warmup().toMillis() / 1000.0).put("durationS", c.duration().toMillis() / 1000.0);
        }
        r.put(c.scenario().manyToMany() ? "clients" : c.scenario() == Scenario.IDLE ? "connections" : "receivers",
                c.count());
        if (c.scenario().campus()) {
            r.put("groups", c.groups()).put("connectRate", c.connectRate());
        }
        if (c.scenario() == Scenario.MIXED) {
            r.put("dataTopics", c.dataTopics()).put("stalled", c.stalled());
        }
        return r;
    }

    private URI uri(String path) {
        return URI.create(relay.baseUri() + path);
    }

    // ---- traffic: every scenario but idle, laid out by its plan ----

    private void traffic(BenchClient client, ProcSampler sampler, RunResult r) throws IOException, InterruptedException {
        FirstContact.Result first = FirstContact.measure(client, relay.baseUri(), topic, config.connectTimeout().toMillis());
        r.put("firstConnectMs", round(first.connectMs(), 2));
        if (first.relayMs() != null) {
            r.put("firstRelayMs", round(first.relayMs(), 2));
        } else {
            r.put("firstRelayLost", 1);
        }

        List<URI> uris = new ArrayList<>();
        List<BenchHandler> handlers = new ArrayList<>();
        for (Group g : plan.groups()) {
            Part part = g.part();
            Function<EventExecutor, IntegrityChecker> checkers = loop -> new IntegrityChecker(part.format(),
                    g.sendersHeard(), g.sendTimes(), clock, part.recorder(loop, clock, momentsSpanNanos()));
            if (part.manyToMany()) {
                for (int i = 0; i < g.receiverCount(); i++) {
                    add(uris, handlers, g.receivers, g.publishPath(), new BenchHandler(checkers, null, errors));
                }
                continue;
            }
            Runnable wake = part.window() > 0 ? g::wake : null;
            for (int i = 0; i < g.receiverCount(); i++) {
                add(uris, handlers, g.receivers, g.receivePath(), new BenchHandler(checkers, wake, errors));
            }
            for (int i = 0; i < g.stalledCount(); i++) {
                add(uris, handlers, g.stalled, g.receivePath(), new BenchHandler(null, null, errors));
            }
            add(uris, handlers, null, g.publishPath(), new BenchHandler(null, null, errors));
        }

        long connectStart = System.nanoTime();
        List<Channel> channels = client.connectAll(uris, handlers, config.connectTimeout().toMillis(), config.connectRate());
        r.put("connectS", round(seconds(System.nanoTime() - connectStart), 2));
        try {
            startSenders(channels);
            Thread.sleep(config.settle().toMillis());
            measure(sampler, r);
        } finally {
            closeAll(channels);
            client.barrier();
        }
        integrity(r);
        momentSpread(r);
    }

    /** One connection of the plan: its path and handler, and the group list it belongs to (if any). */
    private void add(List<URI> uris, List<BenchHandler> handlers, List<BenchHandler> list, String path, BenchHandler h) {
        uris.add(uri(path));
        handlers.add(h);
        if (list != null) {
            list.add(h);
        }
    }

    /**
     * Stalls the readers that never read, then gives every publisher (1:N) or client (N:N) its
     * sender, in the order they connected. Channels follow the plan's order of connections.
     */
    private void startSenders(List<Channel> channels) {
        int next = 0;
        for (Group g : plan.groups()) {
            Part part = g.part();
            if (part.manyToMany()) {
                for (int i = 0; i < g.receiverCount(); i++) {
                    Sender s = new Sender(channels.get(next++), i, part.format(), null, clock, part.rate(), part.window(),
                            config.batch(), () -> -1, config.maxMessages());
                    g.receivers.get(i).sender(s);
                    g.senders.add(s);
                }
                continue;
            }
            next += g.receiverCount();
            for (int i = 0; i < g.stalledCount(); i++) {
                // Stop reading: from now on the relay's writes to it pile up in socket buffers, then in the relay.
                channels.get(next++).config().setAutoRead(false);
            }
            Channel pub = channels.get(next++);
            Sender s = new Sender(pub, 0, part.format(), g.sendTimes(), clock, part.rate(), part.window(),
                    config.batch(), g::minHighestSeq, config.maxMessages());
            ((BenchHandler) pub.pipeline().get("handler")).sender(s);
            g.senders.add(s);
            g.publisher(s);
        }
    }

    private void measure(ProcSampler sampler, RunResult r) throws IOException, InterruptedException {
        long warmupNanos = config.warmup().toNanos();
        long durationNanos = config.duration().toNanos();
        if (sampler != null) {
            sampler.resetPeak();
        }
        clock.start(warmupNanos, durationNanos);
        for (Part part : plan.parts()) {
            List<Sender> senders = part.senders();
            for (int i = 0; i < senders.size(); i++) {
                senders.get(i).start(plan.startDelayNanos(part, i, senders.size()));
            }
        }
        sleepUntil(clock.measureFromNanos());
        Snapshot s0 = snapshot(sampler);
        long lastTotal = s0.bytes;
        long lastProgress = s0.nanos;
        while (System.nanoTime() < clock.stopNanos()) {
            Thread.sleep(Math.max(1, Math.min(POLL_MILLIS, TimeUnit.NANOSECONDS.toMillis(clock.stopNanos() - System.nanoTime()))));
            long total = deliveredBytes();
            if (total != lastTotal) {
                lastTotal = total;
                lastProgress = System.nanoTime();
            }
        }
        Snapshot s1 = snapshot(sampler);
        drain();

        double window = seconds(s1.nanos - s0.nanos);
        long bytes = s1.bytes - s0.bytes;
        long messages = 0;
        for (int p = 0; p < plan.parts().size(); p++) {
            messages += s1.messages[p] - s0.messages[p];
        }
        r.put("windowS", round(window, 3))
                .put("msgPerS", round(messages / window, 1))
                .put("perReceiverMsgPerS", round(messages / window / receiverCount(), 1))
                .put("egressMbitS", round(bytes * 8 / window / 1e6, 2))
                .put("stalledS", round(seconds(s1.nanos - lastProgress), 2));
        pace(r, (s1.sent - s0.sent) / window);
        if (plan.parts().size() > 1) {
            for (int p = 0; p < plan.parts().size(); p++) {
                r.put(plan.parts().get(p).name() + ".msgPerS", round((s1.messages[p] - s0.messages[p]) / window, 1));
            }
        }
        if (sampler != null) {
            double cpu = s1.relayCpuSeconds - s0.relayCpuSeconds;
            r.put("relayCpuS", round(cpu, 2))
                    .put("relayCpuPct", round(100 * cpu / window, 1))
                    .put("cpuSPerGB", bytes > 0 ? round(cpu / (bytes / 1e9), 3) : null)
                    .put("cpuSPerMillionMsgs", messages > 0 ? round(cpu / (messages / 1e6), 3) : null)
                    // What of it was the JIT compiling (a fresh JVM's one-off), and the rest: relaying.
                    .put("relayJitCpuS", round(s1.relayJitSeconds - s0.relayJitSeconds, 2))
                    .put("cpuSPerMillionMsgsNoJit", messages > 0
                            ? round((cpu - (s1.relayJitSeconds - s0.relayJitSeconds)) / (messages / 1e6), 3) : null)
                    .put("relayPeakRssMB", round(sampler.peakRssKb() / 1024.0, 1));
        }
        r.put("clientCpuS", round(s1.selfCpuSeconds - s0.selfCpuSeconds, 2));
    }

    /**
     * What the senders sent per second while measured, and, when every sender is paced, that
     * against their rates in all ({@code sendPacePct}): below 100, the generator (or a relay
     * holding its sockets) fell behind, and relays compared were not offered the same load.
     */
    private void pace(RunResult r, double sentPerS) {
        r.put("sentPerS", round(sentPerS, 1));
        double paced = 0;
        for (Part part : plan.parts()) {
            if (part.rate() <= 0) {
                return;
            }
            paced += part.rate() * part.senders().size();
        }
        r.put("sendPacePct", round(100 * sentPerS / paced, 1));
    }

    /**
     * Stops the senders, then waits for what is still in flight, until all arrived, nothing arrives
     * for a while, or the drain cap.
     */
    private void drain() throws InterruptedException {
        long deadline = System.nanoTime() + config.drain().toNanos();
        List<Future<?>> stopping = new ArrayList<>();
        for (Group g : plan.groups()) {
            for (Sender s : g.senders) {
                stopping.add(s.stop());
            }
        }
        for (Future<?> f : stopping) {
            f.awaitUninterruptibly(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        long quietNanos = config.drainQuiet().toNanos();
        long last = deliveredBytes();
        long lastChange = System.nanoTime();
        while (System.nanoTime() < deadline) {
            long now = deliveredBytes();
            if (now >= expectedBytes()) {
                return;
            }
            if (now != last) {
                last = now;
                lastChange = System.nanoTime();
            } else if (System.nanoTime() - lastChange > quietNanos) {
                return;
            }
            Thread.sleep(POLL_MILLIS / 5);
        }
    }

    private long expectedBytes() {
        long sum = 0;
        for (Group g : plan.groups()) {
            sum += g.expected() * g.part().format().size();
        }
        return sum;
    }

    private long deliveredBytes() {
        long sum = 0;
        for (Group g : plan.groups()) {
            sum += g.deliveredBytes();
        }
        return sum;
    }

    private int receiverCount() {
        int n = 0;
        for (Group g : plan.groups()) {
            n += g.receivers.size();
        }
        return n;
    }

    /** After the loops have stopped touching them: what arrived against what was sent, per part and in all. */
    private void integrity(RunResult r) {
        Tally all = new Tally();
        List<Tally> parts = new ArrayList<>();
        List<LatencyRecorder> recorders = new ArrayList<>();
        for (Part part : plan.parts()) {
            Tally t = new Tally();
            for (Group g : part.groups()) {
                t.add(g);
            }
            all.add(t);
            parts.add(t);
            recorders.addAll(part.recorders());
        }
        all.put(r, "");
        r.put("errors", errors.get());
        latency(r, "", recorders, true);
        if (plan.parts().size() > 1) {
            for (int i = 0; i < parts.size(); i++) {
                Part part = plan.parts().get(i);
                parts.get(i).put(r, part.name() + ".");
                latency(r, part.name() + ".", part.recorders(), false);
            }
        }
        receiverSpread(r);
        long stalledReceived = 0;
        boolean anyStalled = false;
        for (Group g : plan.groups()) {
            for (BenchHandler h : g.stalled) {
                stalledReceived += h.unchecked();
                anyStalled = true;
            }
        }
        if (anyStalled) {
            r.put("slowReceived", stalledReceived);
        }
    }

    /** Latency percentiles of the messages {@code recorders} measured: all, and those of the first 10 s. */
    private static void latency(RunResult r, String prefix, Collection<LatencyRecorder> recorders, boolean full) {
        Histogram all = LatencySummary.newHistogram();
        Histogram first = LatencySummary.newHistogram();
        for (LatencyRecorder rec : recorders) {
            all.add(rec.all());
            first.add(rec.first());
        }
        LatencySummary l = LatencySummary.of(all);
        if (full) {
            r.put("latencyCount", l.count()).put("meanUs", l.meanUs());
        }
        r.put(prefix + "p50Us", l.p50Us());
        if (full) {
            r.put("p90Us", l.p90Us());
        }
        r.put(prefix + "p99Us", l.p99Us()).put(prefix + "p999Us", l.p999Us());
        if (full) {
            r.put("maxUs", l.maxUs());
        }
        r.put(prefix + "p99First10sUs", LatencySummary.of(first).p99Us());
    }

    /** Integrity counts summed over groups: sent, due, arrived, and what went wrong. */
    private static final class Tally {
        long sent;
        long expected;
        long unique;
        long delivered;
        long frames;
        long merged;
        long mergedMessages;
        long reordered;
        long duplicates;
        long corrupt;

        void add(Group g) {
            sent += g.sent();
            expected += g.expected();
            unique += g.unique();
            for (BenchHandler h : g.receivers) {
                IntegrityChecker c = h.checker();
                delivered += c.delivered();
                frames += c.frames();
                merged += c.mergedFrames();
                mergedMessages += c.mergedMessages();
                reordered += c.reordered();
                duplicates += c.duplicates();
                corrupt += c.corrupt();
            }
        }

        void add(Tally t) {
            sent += t.sent;
            expected += t.expected;
            unique += t.unique;
            delivered += t.delivered;
            frames += t.frames;
            merged += t.merged;
            mergedMessages += t.mergedMessages;
            reordered += t.reordered;
            duplicates += t.duplicates;
            corrupt += t.corrupt;
        }

        void put(RunResult r, String prefix) {
            r.put(prefix + "sent", sent)
                    .put(prefix + "expected", expected)
                    .put(prefix + "delivered", delivered)
                    .put(prefix + "framesReceived", frames)
                    .put(prefix + "mergedFrames", merged)
                    .put(prefix + "mergedMessages", mergedMessages)
                    .put(prefix + "lost", expected - unique)
                    .put(prefix + "lossPct", expected > 0 ? round(100.0 * (expected - unique) / expected, 4) : null)
                    .put(prefix + "reordered", reordered)
                    .put(prefix + "duplicates", duplicates)
                    .put(prefix + "corrupt", corrupt);
        }
    }

    /**
     * How far apart the receivers are: the fastest, median and slowest receiver's mean latency.
     * A tail that is a few receivers served late shows as a slowest far above the median; a tail
     * every receiver shares (bursts, pauses) shows as means close together.
     */
    private void receiverSpread(RunResult r) {
        double[] means = plan.groups().stream().flatMap(g -> g.receivers.stream())
                .mapToDouble(h -> h.checker().meanLatencyNanos()).filter(m -> m >= 0).sorted().toArray();
        if (means.length < 2) {
            return;
        }
        r.put("receiverMeanUsMin", round(means[0] / 1000, 1))
                .put("receiverMeanUsMedian", round(means[means.length / 2] / 1000, 1))
                .put("receiverMeanUsMax", round(means[means.length - 1] / 1000, 1));
    }

    /** Arrivals are kept by moment from the start of measurement until the drain's deadline. */
    private long momentsSpanNanos() {
        return config.duration().toNanos() + config.drain().toNanos();
    }

    /**
     * How unevenly deliveries arriving together had aged ({@link LatencyMoments}): the median and
     * the 90th percentile over the run's moments; and the moments themselves, with a trace file.
     */
    private void momentSpread(RunResult r) throws IOException {
        LatencyMoments all = new LatencyMoments(momentsSpanNanos());
        for (Part part : plan.parts()) {
            for (LatencyRecorder rec : part.recorders()) {
                all.add(rec.moments());
            }
        }
        r.put("momentSpreadP50", all.spread(0.5)).put("momentSpreadP90", all.spread(0.9));
        if (config.latencyTrace() != null) {
            all.write(config.latencyTrace(), clock.measureFromNanos());
            r.put("latencyTrace", config.latencyTrace().toString());
        }
    }

    // ---- idle ----

    private void idle(BenchClient client, ProcSampler sampler, RunResult r) throws IOException, InterruptedException {
        ProcStats before = sampler != null ? sampler.now() : null;
        long heapBefore = relay.liveHeapBytes();
        List<URI> uris = new ArrayList<>();
        List<BenchHandler> handlers = new ArrayList<>();
        for (int i = 0; i < config.count(); i++) {
            handlers.add(new BenchHandler(null, null, errors));
            uris.add(uri("/out/" + topic));
        }
        long connectStart = System.nanoTime();
        List<Channel> channels = client.connectAll(uris, handlers, config.connectTimeout().toMillis());
        r.put("connectS", round(seconds(System.nanoTime() - connectStart), 2));
        try {
            Thread.sleep(config.settle().toMillis());
            long heapAfter = relay.liveHeapBytes();
            if (sampler != null) {
                ProcStats after = sampler.now();
                r.put("relayRssBeforeMB", round(before.rssKb() / 1024.0, 1))
                        .put("relayRssMB", round(after.rssKb() / 1024.0, 1))
                        .put("rssPerConnKB", round((after.rssKb() - before.rssKb()) / (double) config.count(), 2));
            }
            if (heapBefore >= 0 && heapAfter >= 0) {
                r.put("heapBeforeMB", round(heapBefore / 1048576.0, 1))
                        .put("heapMB", round(heapAfter / 1048576.0, 1))
                        .put("heapPerConnB", Math.round((heapAfter - heapBefore) / (double) config.count()));
            }
            // Hold them for the run's duration: an idle relay must not grow or drop anyone.
            long holdUntil = System.nanoTime() + config.duration().toNanos();
            sleepUntil(holdUntil);
            long open = channels.stream().filter(Channel::isActive).count();
            r.put("stillOpen", open);
            if (sampler != null) {
                r.put("relayPeakRssMB", round(sampler.peakRssKb() / 1024.0, 1));
            }
        } finally {
            closeAll(channels);
            client.barrier();
        }
        r.put("errors", errors.get());
    }

    // ---- helpers ----

    private static void closeAll(List<Channel> channels) {
        List<io.netty.channel.ChannelFuture> closing = new ArrayList<>(channels.size());
        for (Channel ch : channels) {
            closing.add(ch.close());
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_TIMEOUT_MILLIS);
        for (io.netty.channel.ChannelFuture f : closing) {
            f.awaitUninterruptibly(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
    }

    /** Progress (bytes in all, messages per part) and CPU readings at one instant, to subtract one from another. */
    private record Snapshot(long nanos, long bytes, long[] messages, long sent, double relayCpuSeconds,
                            double relayJitSeconds, double selfCpuSeconds) {
    }

    private Snapshot snapshot(ProcSampler sampler) throws IOException {
        double relayCpu = sampler != null ? sampler.now().cpuSeconds() : 0;
        double relayJit = sampler != null ? sampler.compilerCpuSeconds() : 0;
        double self = ProcStats.read("self").cpuSeconds();
        long[] messages = new long[plan.parts().size()];
        for (int p = 0; p < messages.length; p++) {
            messages[p] = plan.parts().get(p).deliveredMessages();
        }
        long sent = 0;
        for (Group g : plan.groups()) {
            sent += g.sent();
        }
        return new Snapshot(System.nanoTime(), deliveredBytes(), messages, sent, relayCpu, relayJit, self);
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long left;
        while ((left = nanos - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS)));
        }
    }

    private static double seconds(long nanos) {
        return nanos / 1e9;
    }

    static double round(double v, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(v * scale) / scale;
    }
}

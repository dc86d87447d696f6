package dev.crossbar.bench.load;

import static java.util.Objects.requireNonNull;

import io.netty.channel.Channel;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import java.io.IOException;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
 * run, warm-up included, after the drain.
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
    private final MessageFormat format;
    private final RunClock clock = new RunClock();
    private final Map<EventExecutor, Histogram> histograms = new ConcurrentHashMap<>();
    private final Map<EventExecutor, LatencyMoments> moments = new ConcurrentHashMap<>();
    private final AtomicLong errors = new AtomicLong();

    private final List<BenchHandler> receivers = new ArrayList<>();
    private final List<Sender> senders = new ArrayList<>();
    private BenchHandler slowHandler;
    private volatile Sender publisher;

    LoadRun(LoadConfig config, Relay relay, int runIndex) {
        this.config = requireNonNull(config, "config");
        this.relay = requireNonNull(relay, "relay");
        this.runIndex = runIndex;
        // A fresh topic per run: a late message from an earlier run can never be counted here.
        this.topic = config.topic() + "-" + runIndex + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
        this.format = config.scenario().sends() ? new MessageFormat(config.size()) : null;
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
        return r.put(c.scenario() == Scenario.MESH ? "clients" : c.scenario() == Scenario.IDLE ? "connections" : "receivers",
                c.count());
    }

    private URI uri(String path) {
        return URI.create(relay.baseUri() + path);
    }

    // ---- traffic scenarios: pingpong, large, fanout, mesh, slow ----

    private void traffic(BenchClient client, ProcSampler sampler, RunResult r) throws IOException, InterruptedException {
        boolean mesh = config.scenario() == Scenario.MESH;
        int senderCount = mesh ? config.count() : 1;
        SendTimes sendTimes = format.isTiny() ? new SendTimes() : null;
        Function<EventExecutor, IntegrityChecker> checkers = loop -> new IntegrityChecker(format, senderCount,
                sendTimes, clock, histograms.computeIfAbsent(loop, l -> LatencySummary.newHistogram()),
                moments.computeIfAbsent(loop, l -> new LatencyMoments(momentsSpanNanos())));

        List<URI> uris = new ArrayList<>();
        List<BenchHandler> handlers = new ArrayList<>();
        if (mesh) {
            for (int i = 0; i < config.count(); i++) {
                BenchHandler h = new BenchHandler(checkers, null, errors);
                receivers.add(h);
                handlers.add(h);
                uris.add(uri("/" + topic));
            }
        } else {
            Runnable wake = () -> {
                Sender p = publisher;
                if (p != null) {
                    p.wake();
                }
            };
            for (int i = 0; i < config.count(); i++) {
                BenchHandler h = new BenchHandler(checkers, config.window() > 0 ? wake : null, errors);
                receivers.add(h);
                handlers.add(h);
                uris.add(uri("/out/" + topic));
            }
            if (config.scenario() == Scenario.SLOW) {
                slowHandler = new BenchHandler(null, null, errors);
                handlers.add(slowHandler);
                uris.add(uri("/out/" + topic));
            }
            handlers.add(new BenchHandler(null, null, errors));
            uris.add(uri("/in/" + topic));
        }

        long connectStart = System.nanoTime();
        List<Channel> channels = client.connectAll(uris, handlers, config.connectTimeout().toMillis());
        r.put("connectS", round(seconds(System.nanoTime() - connectStart), 2));
        try {
            if (slowHandler != null) {
                // Stop reading: from now on the relay's writes to it pile up in socket buffers, then in the relay.
                channels.get(config.count()).config().setAutoRead(false);
            }
            startSenders(channels, sendTimes, mesh);
            Thread.sleep(config.settle().toMillis());
            measure(sampler, r, mesh);
        } finally {
            closeAll(channels);
            client.barrier();
        }
        integrity(r, mesh);
        momentSpread(r);
    }

    private void startSenders(List<Channel> channels, SendTimes sendTimes, boolean mesh) {
        if (mesh) {
            for (int i = 0; i < channels.size(); i++) {
                Sender s = new Sender(channels.get(i), i, format, null, clock, config.rate(), config.window(),
                        config.batch(), () -> -1, config.maxMessages());
                receivers.get(i).sender(s);
                senders.add(s);
            }
            return;
        }
        Channel pubChannel = channels.get(channels.size() - 1);
        BenchHandler[] tracked = receivers.toArray(new BenchHandler[0]);
        Sender s = new Sender(pubChannel, 0, format, sendTimes, clock, config.rate(), config.window(),
                config.batch(), () -> minHighestSeq(tracked), config.maxMessages());
        ((BenchHandler) pubChannel.pipeline().get("handler")).sender(s);
        senders.add(s);
        publisher = s;
    }

    /** Highest sequence every (reading) subscriber has seen: the window's lower edge. */
    private static long minHighestSeq(BenchHandler[] tracked) {
        long min = Long.MAX_VALUE;
        for (BenchHandler h : tracked) {
            min = Math.min(min, h.checker().highestSeq(0));
        }
        return min;
    }

    private void measure(ProcSampler sampler, RunResult r, boolean mesh) throws IOException, InterruptedException {
        long warmupNanos = config.warmup().toNanos();
        long durationNanos = config.duration().toNanos();
        if (sampler != null) {
            sampler.resetPeak();
        }
        clock.start(warmupNanos, durationNanos);
        for (Sender s : senders) {
            s.start();
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
        drain(mesh);

        double window = seconds(s1.nanos - s0.nanos);
        long bytes = s1.bytes - s0.bytes;
        long messages = bytes / format.size();
        r.put("windowS", round(window, 3))
                .put("msgPerS", round(messages / window, 1))
                .put("perReceiverMsgPerS", round(messages / window / receivers.size(), 1))
                .put("egressMbitS", round(bytes * 8 / window / 1e6, 2))
                .put("stalledS", round(seconds(s1.nanos - lastProgress), 2));
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
     * Stops the senders, then waits for what is still in flight, until all arrived, nothing arrives
     * for a while, or the drain cap.
     */
    private void drain(boolean mesh) throws InterruptedException {
        long deadline = System.nanoTime() + config.drain().toNanos();
        List<Future<?>> stopping = new ArrayList<>(senders.size());
        for (Sender s : senders) {
            stopping.add(s.stop());
        }
        for (Future<?> f : stopping) {
            f.awaitUninterruptibly(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        long quietNanos = config.drainQuiet().toNanos();
        long last = deliveredBytes();
        long lastChange = System.nanoTime();
        while (System.nanoTime() < deadline) {
            long expectedBytes = expected(mesh) * format.size();
            long now = deliveredBytes();
            if (now >= expectedBytes) {
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

    private long expected(boolean mesh) {
        long sum = 0;
        for (Sender s : senders) {
            sum += s.sent();
        }
        return mesh ? sum * (config.count() - 1) : sum * receivers.size();
    }

    private long deliveredBytes() {
        long sum = 0;
        for (BenchHandler h : receivers) {
            sum += h.checker().deliveredBytes();
        }
        return sum;
    }

    /** After the loops have stopped touching them: what arrived against what was sent. */
    private void integrity(RunResult r, boolean mesh) {
        long sent = 0;
        long[] sentBy = new long[senders.size()];
        for (int i = 0; i < senders.size(); i++) {
            sentBy[i] = senders.get(i).sent();
            sent += sentBy[i];
        }
        long delivered = 0;
        long unique = 0;
        long frames = 0;
        long merged = 0;
        long mergedMessages = 0;
        long reordered = 0;
        long duplicates = 0;
        long corrupt = 0;
        for (int i = 0; i < receivers.size(); i++) {
            IntegrityChecker c = receivers.get(i).checker();
            delivered += c.delivered();
            frames += c.frames();
            merged += c.mergedFrames();
            mergedMessages += c.mergedMessages();
            reordered += c.reordered();
            duplicates += c.duplicates();
            corrupt += c.corrupt();
            for (int s = 0; s < c.senders(); s++) {
                if (!mesh || s != i) {
                    unique += c.unique(s);
                }
            }
        }
        long expected = mesh ? sent * (config.count() - 1) : sent * receivers.size();
        Histogram all = LatencySummary.newHistogram();
        for (Histogram h : histograms.values()) {
            all.add(h);
        }
        LatencySummary l = LatencySummary.of(all);
        r.put("sent", sent)
                .put("expected", expected)
                .put("delivered", delivered)
                .put("framesReceived", frames)
                .put("mergedFrames", merged)
                .put("mergedMessages", mergedMessages)
                .put("lost", expected - unique)
                .put("lossPct", expected > 0 ? round(100.0 * (expected - unique) / expected, 4) : null)
                .put("reordered", reordered)
                .put("duplicates", duplicates)
                .put("corrupt", corrupt)
                .put("errors", errors.get())
                .put("latencyCount", l.count())
                .put("meanUs", l.meanUs())
                .put("p50Us", l.p50Us())
                .put("p90Us", l.p90Us())
                .put("p99Us", l.p99Us())
                .put("p999Us", l.p999Us())
                .put("maxUs", l.maxUs());
        receiverSpread(r);
        if (slowHandler != null) {
            r.put("slowReceived", slowHandler.unchecked());
        }
    }

    /**
     * How far apart the receivers are: the fastest, median and slowest receiver's mean latency.
     * A tail that is a few receivers served late shows as a slowest far above the median; a tail
     * every receiver shares (bursts, pauses) shows as means close together.
     */
    private void receiverSpread(RunResult r) {
        double[] means = receivers.stream().mapToDouble(h -> h.checker().meanLatencyNanos()).filter(m -> m >= 0)
                .sorted().toArray();
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
        for (LatencyMoments m : moments.values()) {
            all.add(m);
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

    /** Progress and CPU readings at one instant, to subtract one from another. */
    private record Snapshot(long nanos, long bytes, double relayCpuSeconds, double relayJitSeconds,
                            double selfCpuSeconds) {
    }

    private Snapshot snapshot(ProcSampler sampler) throws IOException {
        double relayCpu = sampler != null ? sampler.now().cpuSeconds() : 0;
        double relayJit = sampler != null ? sampler.compilerCpuSeconds() : 0;
        double self = ProcStats.read("self").cpuSeconds();
        return new Snapshot(System.nanoTime(), deliveredBytes(), relayCpu, relayJit, self);
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

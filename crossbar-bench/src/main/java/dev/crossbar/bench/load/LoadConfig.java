package dev.crossbar.bench.load;

import static java.util.Objects.requireNonNull;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * One load run's parameters, validated when built: every run is bounded in time (warm-up,
 * duration, drain and connect time each have a cap) and in count (messages, connections), and
 * talks to loopback only. Defaults are the constants below and the {@link Scenario}'s own.
 */
final class LoadConfig {

    public static final Duration DEFAULT_DURATION = Duration.ofSeconds(10);
    public static final Duration DEFAULT_WARMUP = Duration.ofSeconds(2);
    public static final Duration DEFAULT_DRAIN = Duration.ofSeconds(5);
    /** A drain ends early once nothing has arrived for this long (the relay dropped or stalled). */
    public static final Duration DEFAULT_DRAIN_QUIET = Duration.ofSeconds(1);
    public static final Duration DEFAULT_SETTLE = Duration.ofMillis(500);
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(60);
    public static final long DEFAULT_MAX_MESSAGES = 100_000_000;
    public static final int DEFAULT_CLIENT_THREADS = 2;
    /**
     * Messages per flush: one frame per write, as browsers, websocat and the Go or Python clients
     * send. The generator's earlier behaviour, and its published Go-original figures, was
     * {@link #MAX_BATCH}.
     */
    public static final int DEFAULT_BATCH = 1;
    /** Mixed's data topics, beside its video streams and file transfer. */
    public static final int DEFAULT_DATA_TOPICS = 200;
    /** Mixed's stalled readers, on its first video stream. */
    public static final int DEFAULT_STALLED = 1;

    public static final Duration MAX_DURATION = Duration.ofMinutes(10);
    public static final Duration MAX_PHASE = Duration.ofMinutes(2);
    /** Sequence numbers index a per-sender bit set: an int. */
    public static final long MAX_MESSAGES = Integer.MAX_VALUE;
    public static final int MAX_CONNECTIONS = 100_000;
    public static final double MAX_RATE = 10_000_000;
    public static final int MAX_CLIENT_THREADS = 64;
    public static final int MAX_BATCH = Sender.MAX_PASS;
    /** Streams or topics in one run: Crossbar's default topic limit. */
    public static final int MAX_GROUPS = 10_000;
    public static final int MAX_STALLED = 100;
    public static final double MAX_CONNECT_RATE = 100_000;

    private final Scenario scenario;
    private final URI baseUri;
    private final String label;
    private final String topic;
    private final int size;
    private final int count;
    private final int groups;
    private final int dataTopics;
    private final int stalled;
    private final double connectRate;
    private final double rate;
    private final int window;
    private final int batch;
    private final Duration warmup;
    private final Duration duration;
    private final Duration drain;
    private final Duration drainQuiet;
    private final Duration settle;
    private final Duration connectTimeout;
    private final long maxMessages;
    private final int clientThreads;
    private final List<String> bindAddresses;
    private final SlowPolicy slow;
    private final Path latencyTrace;

    private LoadConfig(Builder b) {
        this.scenario = requireNonNull(b.scenario, "scenario");
        this.baseUri = checkLoopback(requireNonNull(b.baseUri, "baseUri"));
        this.label = requireNonNull(b.label, "label");
        this.topic = requireNonNull(b.topic, "topic");
        if (!topic.matches("[A-Za-z0-9._-]{1,64}")) {
            throw new IllegalArgumentException("topic: '" + topic + "' (expected: 1-64 of A-Z a-z 0-9 . _ -)");
        }
        this.size = b.size != null ? b.size : scenario.size;
        if (scenario.sends() && (size < MessageFormat.MIN_SIZE || size > MessageFormat.MAX_SIZE)) {
            throw new IllegalArgumentException("size: " + size + " (expected: " + MessageFormat.MIN_SIZE + ".."
                    + MessageFormat.MAX_SIZE + " bytes)");
        }
        this.count = b.count != null ? b.count : scenario.count;
        int minCount = scenario.manyToMany() ? 2 : 1;
        if (count < minCount || count > MAX_CONNECTIONS) {
            throw new IllegalArgumentException("count: " + count + " (expected: " + minCount + ".." + MAX_CONNECTIONS + ")");
        }
        if (scenario == Scenario.PINGPONG || scenario == Scenario.LARGE) {
            if (count != 1) {
                throw new IllegalArgumentException(scenario.label() + ": " + count + " receivers (expected: 1; use fanout for more)");
            }
        }
        if (scenario.manyToMany() && size < MessageFormat.HEADER_BYTES) {
            throw new IllegalArgumentException("size: " + size + " (expected: >= " + MessageFormat.HEADER_BYTES
                    + " for " + scenario.label() + ", whose messages must name their sender)");
        }
        if (scenario.campus() && size < MessageFormat.HEADER_BYTES) {
            // A tiny message's send time is kept in a ring of 8 MiB per sender: not for hundreds of them.
            throw new IllegalArgumentException("size: " + size + " (expected: >= " + MessageFormat.HEADER_BYTES
                    + " for " + scenario.label() + ", whose messages carry their send time)");
        }
        if (scenario.manyToMany() && count > MessageFormat.MAX_SENDERS) {
            throw new IllegalArgumentException("clients: " + count + " (expected: <= " + MessageFormat.MAX_SENDERS + ")");
        }
        this.rate = b.rate != null ? b.rate : scenario.rate;
        if (rate < 0 || rate > MAX_RATE || Double.isNaN(rate)) {
            throw new IllegalArgumentException("rate: " + rate + " (expected: 0.." + (long) MAX_RATE + " messages/s; 0 is as fast as possible)");
        }
        this.window = b.window != null ? b.window
                : rate == 0 && scenario.window == 0 ? Scenario.AS_FAST_AS_POSSIBLE_WINDOW : scenario.window;
        if (window < 0 || window > SendTimes.CAPACITY) {
            throw new IllegalArgumentException("window: " + window + " (expected: 0.." + SendTimes.CAPACITY + ")");
        }
        if (scenario.sends() && rate == 0 && window == 0) {
            throw new IllegalArgumentException("rate 0 and window 0 (expected: a rate, a window or both, so a run is bounded)");
        }
        if (scenario.manyToMany() && rate == 0) {
            throw new IllegalArgumentException("rate: 0 (expected: > 0 for " + scenario.label() + ", whose clients send at a rate)");
        }
        if (scenario.campus() && rate == 0) {
            throw new IllegalArgumentException("rate: 0 (expected: > 0 for " + scenario.label() + ", whose senders are paced)");
        }
        if (scenario == Scenario.TOPICS && window != 0) {
            throw new IllegalArgumentException("window: " + window + " (expected: 0 for topics, whose clients are paced only)");
        }
        this.groups = b.groups != null ? b.groups : scenario.groups;
        if (!scenario.campus() && groups != 1) {
            throw new IllegalArgumentException("groups: " + groups + " (expected: 1 for " + scenario.label()
                    + "; streams, topics and mixed have many)");
        }
        if (groups < 1 || groups > MAX_GROUPS) {
            throw new IllegalArgumentException("groups: " + groups + " (expected: 1.." + MAX_GROUPS + ")");
        }
        this.dataTopics = mixedOnly("dataTopics", b.dataTopics, DEFAULT_DATA_TOPICS, MAX_GROUPS);
        this.stalled = mixedOnly("stalled", b.stalled, DEFAULT_STALLED, MAX_STALLED);
        this.connectRate = b.connectRate != null ? b.connectRate : scenario.connectRate;
        if (connectRate < 0 || connectRate > MAX_CONNECT_RATE || Double.isNaN(connectRate)) {
            throw new IllegalArgumentException("connectRate: " + connectRate + " (expected: 0.." + (long) MAX_CONNECT_RATE
                    + " connections/s; 0 is as fast as " + BenchClient.MAX_PENDING_HANDSHAKES + " pending handshakes allow)");
        }
        long connections = Plan.connections(scenario, groups, count, dataTopics, stalled);
        if (connections > MAX_CONNECTIONS) {
            throw new IllegalArgumentException(scenario.label() + ": " + connections + " connections (expected: <= "
                    + MAX_CONNECTIONS + "; fewer groups or clients)");
        }
        this.batch = b.batch;
        if (batch < 1 || batch > MAX_BATCH) {
            throw new IllegalArgumentException("batch: " + batch + " (expected: 1.." + MAX_BATCH + " messages per flush)");
        }
        if (size < MessageFormat.HEADER_BYTES && scenario.sends() && window == 0) {
            throw new IllegalArgumentException("window: 0 (expected: > 0 for " + size
                    + "-byte messages, whose send times are kept in a ring of " + SendTimes.CAPACITY + ")");
        }
        this.warmup = within("warmup", b.warmup, Duration.ZERO, MAX_PHASE);
        this.duration = within("duration", b.duration, Duration.ofMillis(100), MAX_DURATION);
        this.drain = within("drain", b.drain, Duration.ZERO, MAX_PHASE);
        this.drainQuiet = within("drainQuiet", b.drainQuiet, Duration.ofMillis(10), MAX_PHASE);
        this.settle = within("settle", b.settle, Duration.ZERO, MAX_PHASE);
        this.connectTimeout = within("connectTimeout", b.connectTimeout, Duration.ofMillis(100), MAX_PHASE);
        this.maxMessages = b.maxMessages;
        if (maxMessages < 1 || maxMessages > MAX_MESSAGES) {
            throw new IllegalArgumentException("maxMessages: " + maxMessages + " (expected: 1.." + MAX_MESSAGES + ")");
        }
        this.clientThreads = b.clientThreads;
        if (clientThreads < 1 || clientThreads > MAX_CLIENT_THREADS) {
            throw new IllegalArgumentException("clientThreads: " + clientThreads + " (expected: 1.." + MAX_CLIENT_THREADS + ")");
        }
        this.bindAddresses = List.copyOf(b.bindAddresses);
        this.slow = b.slow;
        this.latencyTrace = b.latencyTrace;
        for (String a : bindAddresses) {
            checkLoopbackHost("bind", a);
        }
    }

    /** A figure of mixed's only: its default there, and refused elsewhere rather than ignored. */
    private int mixedOnly(String name, Integer value, int mixedDefault, int max) {
        if (scenario != Scenario.MIXED) {
            if (value != null) {
                throw new IllegalArgumentException(name + ": " + value + " (expected: only for mixed)");
            }
            return 0;
        }
        int v = value != null ? value : mixedDefault;
        if (v < 0 || v > max) {
            throw new IllegalArgumentException(name + ": " + v + " (expected: 0.." + max + ")");
        }
        return v;
    }

    private static Duration within(String name, Duration value, Duration min, Duration max) {
        requireNonNull(value, name);
        if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: " + min + ".." + max + ")");
        }
        return value;
    }

    /** Benchmarks talk to this machine only. */
    static URI checkLoopback(URI uri) {
        if (!"ws".equals(uri.getScheme()) || uri.getHost() == null || uri.getPort() <= 0) {
            throw new IllegalArgumentException("url: '" + uri + "' (expected: ws://127.0.0.1:PORT)");
        }
        checkLoopbackHost("url", uri.getHost());
        return URI.create("ws://" + uri.getHost() + ":" + uri.getPort());
    }

    private static void checkLoopbackHost(String name, String host) {
        try {
            if (!InetAddress.getByName(host).isLoopbackAddress()) {
                throw new IllegalArgumentException(name + ": '" + host + "' (expected: a loopback address such as 127.0.0.1)");
            }
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(name + ": '" + host + "' (expected: a loopback address; unknown host)");
        }
    }

    static Builder builder(Scenario scenario, URI baseUri) {
        return new Builder(scenario, baseUri);
    }

    Builder toBuilder() {
        Builder b = new Builder(scenario, baseUri);
        b.label = label;
        b.topic = topic;
        b.size = size;
        b.count = count;
        b.groups = groups;
        b.dataTopics = scenario == Scenario.MIXED ? dataTopics : null;
        b.stalled = scenario == Scenario.MIXED ? stalled : null;
        b.connectRate = connectRate;
        b.rate = rate;
        b.window = window;
        b.batch = batch;
        b.warmup = warmup;
        b.duration = duration;
        b.drain = drain;
        b.drainQuiet = drainQuiet;
        b.settle = settle;
        b.connectTimeout = connectTimeout;
        b.maxMessages = maxMessages;
        b.clientThreads = clientThreads;
        b.bindAddresses = bindAddresses;
        b.slow = slow;
        b.latencyTrace = latencyTrace;
        return b;
    }

    Scenario scenario() {
        return scenario;
    }

    URI baseUri() {
        return baseUri;
    }

    String label() {
        return label;
    }

    String topic() {
        return topic;
    }

    int size() {
        return size;
    }

    /**
     * Subscribers (fanout, slow: not counting the slow one), clients (mesh) or connections (idle);
     * viewers per stream (streams, mixed's video) or clients per topic (topics).
     */
    int count() {
        return count;
    }

    /** Streams (streams, mixed's video) or topics (topics); 1 for the single-topic scenarios. */
    int groups() {
        return groups;
    }

    /** Mixed's data topics; 0 for the other scenarios. */
    int dataTopics() {
        return dataTopics;
    }

    /** Mixed's readers that never read, on its first video stream; 0 for the other scenarios. */
    int stalled() {
        return stalled;
    }

    /** Connections opened per second; 0 is as fast as the pending-handshake bound allows. */
    double connectRate() {
        return connectRate;
    }

    double rate() {
        return rate;
    }

    int window() {
        return window;
    }

    /** Messages written per flush by each sender; 1 is one frame per write. */
    int batch() {
        return batch;
    }

    Duration warmup() {
        return warmup;
    }

    Duration duration() {
        return duration;
    }

    Duration drain() {
        return drain;
    }

    Duration drainQuiet() {
        return drainQuiet;
    }

    Duration settle() {
        return settle;
    }

    Duration connectTimeout() {
        return connectTimeout;
    }

    long maxMessages() {
        return maxMessages;
    }

    int clientThreads() {
        return clientThreads;
    }

    List<String> bindAddresses() {
        return bindAddresses;
    }

    /** The stream rule the relay was started with, or null when this tool did not choose one. */
    SlowPolicy slow() {
        return slow;
    }

    /** Where latency by moment of arrival goes after the run, or null. */
    Path latencyTrace() {
        return latencyTrace;
    }

    /** Longest a run can take, all phases at their caps: what tests and callers may rely on. */
    Duration upperBound() {
        Duration firstContact = Duration.ofMillis(ClientWarmUp.TIMEOUT_MILLIS).plus(connectTimeout)
                .plus(Duration.ofMillis(FirstContact.DELIVERY_TIMEOUT_MILLIS));
        return firstContact.plus(connectTimeout).plus(settle).plus(warmup).plus(duration).plus(drain)
                .plus(Duration.ofSeconds(10)); // closing connections and loops
    }

    /** Builds a {@link LoadConfig}; unset values take the scenario's or the class's defaults. */
    static final class Builder {
        private final Scenario scenario;
        private final URI baseUri;
        private String label = "relay";
        private String topic = "bench";
        private Integer size;
        private Integer count;
        private Integer groups;
        private Integer dataTopics;
        private Integer stalled;
        private Double connectRate;
        private Double rate;
        private Integer window;
        private int batch = DEFAULT_BATCH;
        private Duration warmup = DEFAULT_WARMUP;
        private Duration duration = DEFAULT_DURATION;
        private Duration drain = DEFAULT_DRAIN;
        private Duration drainQuiet = DEFAULT_DRAIN_QUIET;
        private Duration settle = DEFAULT_SETTLE;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private long maxMessages = DEFAULT_MAX_MESSAGES;
        private int clientThreads = DEFAULT_CLIENT_THREADS;
        private List<String> bindAddresses = List.of();
        private SlowPolicy slow;
        private Path latencyTrace;

        private Builder(Scenario scenario, URI baseUri) {
            this.scenario = scenario;
            this.baseUri = baseUri;
        }

        Builder label(String v) {
            label = v;
            return this;
        }

        Builder topic(String v) {
            topic = v;
            return this;
        }

        Builder size(Integer v) {
            size = v;
            return this;
        }

        Builder count(Integer v) {
            count = v;
            return this;
        }

        /** Streams (streams, mixed's video) or topics (topics); null for the scenario's default. */
        Builder groups(Integer v) {
            groups = v;
            return this;
        }

        /** Mixed's data topics; null for its default (refused for other scenarios). */
        Builder dataTopics(Integer v) {
            dataTopics = v;
            return this;
        }

        /** Mixed's stalled readers; null for its default (refused for other scenarios). */
        Builder stalled(Integer v) {
            stalled = v;
            return this;
        }

        /** Connections opened per second, 0 for unpaced; null for the scenario's default. */
        Builder connectRate(Double v) {
            connectRate = v;
            return this;
        }

        Builder rate(Double v) {
            rate = v;
            return this;
        }

        Builder window(Integer v) {
            window = v;
            return this;
        }

        Builder batch(int v) {
            batch = v;
            return this;
        }

        Builder warmup(Duration v) {
            warmup = v;
            return this;
        }

        Builder duration(Duration v) {
            duration = v;
            return this;
        }

        Builder drain(Duration v) {
            drain = v;
            return this;
        }

        Builder drainQuiet(Duration v) {
            drainQuiet = v;
            return this;
        }

        Builder settle(Duration v) {
            settle = v;
            return this;
        }

        Builder connectTimeout(Duration v) {
            connectTimeout = v;
            return this;
        }

        Builder maxMessages(long v) {
            maxMessages = v;
            return this;
        }

        Builder clientThreads(int v) {
            clientThreads = v;
            return this;
        }

        Builder bindAddresses(List<String> v) {
            bindAddresses = requireNonNull(v, "bindAddresses");
            return this;
        }

        Builder slow(SlowPolicy v) {
            slow = v;
            return this;
        }

        /** Where to write latency by moment of arrival ({@link LatencyMoments}), or null for nowhere. */
        Builder latencyTrace(Path v) {
            latencyTrace = v;
            return this;
        }

        LoadConfig build() {
            return new LoadConfig(this);
        }
    }
}

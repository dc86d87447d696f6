package dev.crossbar.bench.load;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code load}: flags mapped onto {@link LoadConfig}, runs repeated, results printed and saved. */
@Command(name = "load", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        description = {"End-to-end load generator for relays that follow Crossbar's routes",
                "(/in/<t> -> /out/<t> 1:N, any other path N:N), on loopback only.",
                "Every message is checked: loss, reorder, duplicates, corruption and merged frames are reported."})
final class LoadCommand implements Callable<Integer> {

    /** Largest --repeat: a repeat is for a median, not a soak. */
    static final int MAX_REPEAT = 100;

    @Parameters(index = "0", paramLabel = "SCENARIO",
            description = "pingpong | large | fanout | mesh | slow | idle | streams | topics | mixed")
    Scenario scenario;

    @ArgGroup(exclusive = true, multiplicity = "1")
    RelayChoice relayChoice;

    /** Where the relay comes from: exactly one. */
    static final class RelayChoice {
        @Option(names = "--url", paramLabel = "ws://127.0.0.1:PORT", description = "Measure a running relay.")
        URI url;

        @Option(names = "--spawn", paramLabel = "COMMAND",
                description = "Start the relay for each run with this command; {port} is replaced by a free port,"
                        + " e.g. 'java -jar crossbar-server/target/crossbar.jar --listen 127.0.0.1:{port}'.")
        String spawn;

        @Option(names = "--in-process", description = "Start Crossbar in this JVM (its CPU cannot be measured apart).")
        boolean inProcess;
    }

    @Option(names = "--spawn-session", paramLabel = "own|inherit",
            description = "With --spawn: 'own' starts the relay under setsid, in its own session (and, with autogroup,"
                    + " its own scheduling group) as a deployed relay runs; 'inherit' makes it a plain child of this"
                    + " tool, in its scheduling group (default ${DEFAULT-VALUE}).")
    SpawnedRelay.Session spawnSession = SpawnedRelay.DEFAULT_SESSION;

    @Option(names = "--slow", paramLabel = "drop|backpressure",
            description = "With --spawn of Crossbar, or --in-process: 'backpressure' appends --route '/**:slow=backpressure' to the relay's"
                    + " command (lossless 1:N: a slow subscriber holds the publisher back; in mixed, '" + Plan.FILE_PATTERN
                    + ":slow=backpressure', its file transfer only); 'drop' starts it as given,"
                    + " with Crossbar's default (a subscriber over its bound loses whole messages). Recorded as 'slow'.")
    SlowPolicy slow;

    @Option(names = "--pid", paramLabel = "PID", description = "With --url: the relay's pid, to sample its CPU and RSS.")
    long pid = -1;

    @Option(names = "--relay-loops", paramLabel = "N", description = "With --in-process: relay event loops (default ${DEFAULT-VALUE}).")
    int relayLoops = 2;

    @Option(names = "--label", paramLabel = "NAME", description = "Name of the relay in results (default ${DEFAULT-VALUE}).")
    String label = "relay";

    @Option(names = "--size", paramLabel = "BYTES", converter = Units.SizeConverter.class,
            description = "Message size (default: pingpong 64, large 1MiB, fanout/slow/streams 4600, mesh 256, topics 200;"
                    + " mixed: its video's, 4600).")
    Integer size;

    @Option(names = {"-n", "--subscribers", "--clients", "--connections", "--viewers"}, paramLabel = "N",
            description = "Subscribers (fanout 100, slow 10 plus the slow one), clients (mesh 10), connections (idle 1000),"
                    + " viewers per stream (streams, mixed: 4) or clients per topic (topics 2).")
    Integer count;

    @Option(names = {"--groups", "--streams"}, paramLabel = "N",
            description = "Streams (streams 200, mixed's video 50) or topics (topics 1000).")
    Integer groups;

    @Option(names = "--data-topics", paramLabel = "N",
            description = "mixed: data topics of " + Plan.DATA_CLIENTS + " clients, each sending " + (int) Plan.DATA_RATE + " x "
                    + Plan.DATA_SIZE + " B/s (default " + LoadConfig.DEFAULT_DATA_TOPICS + ").")
    Integer dataTopics;

    @Option(names = "--stalled", paramLabel = "N",
            description = "mixed: readers on its first video stream that never read (default " + LoadConfig.DEFAULT_STALLED
                    + "; 0 for the same run without).")
    Integer stalled;

    @Option(names = "--connect-rate", paramLabel = "CONN/S",
            description = "Connections opened per second, 0 = as fast as " + BenchClient.MAX_PENDING_HANDSHAKES
                    + " pending handshakes allow (default: streams, topics, mixed 1000, else 0).")
    Double connectRate;

    @Option(names = "--rate", paramLabel = "MSG/S",
            description = "Messages per second per sender, 0 = as fast as the window allows (default: fanout 30, slow 2000, mesh 100,"
                    + " streams and mixed's video 30, topics 10, else 0).")
    Double rate;

    @Option(names = "--window", paramLabel = "N",
            description = "Most messages in flight per sender (default: pingpong 128, large 4, as-fast-as-possible 64, paced 0 = none).")
    Integer window;

    @Option(names = "--batch", paramLabel = "N",
            description = "Messages written per flush by each sender: 1 is one frame per write, as browsers and"
                    + " websocat send (default ${DEFAULT-VALUE}; up to " + LoadConfig.MAX_BATCH + ", the earlier behaviour).")
    int batch = LoadConfig.DEFAULT_BATCH;

    @Option(names = "--duration", paramLabel = "DURATION", converter = Units.DurationConverter.class, defaultValue = "10s",
            description = "Measured time (idle: how long connections are held) (default ${DEFAULT-VALUE}, max 10m).")
    Duration duration;

    @Option(names = "--warmup", paramLabel = "DURATION", converter = Units.DurationConverter.class, defaultValue = "2s",
            description = "Traffic before measuring (default ${DEFAULT-VALUE}).")
    Duration warmup;

    @Option(names = "--drain", paramLabel = "DURATION", converter = Units.DurationConverter.class, defaultValue = "5s",
            description = "Longest wait for in-flight messages after sending stops (default ${DEFAULT-VALUE}).")
    Duration drain;

    @Option(names = "--settle", paramLabel = "DURATION", converter = Units.DurationConverter.class, defaultValue = "500ms",
            description = "Pause after connecting, before sending (idle: before measuring memory) (default ${DEFAULT-VALUE}).")
    Duration settle;

    @Option(names = "--connect-timeout", paramLabel = "DURATION", converter = Units.DurationConverter.class, defaultValue = "60s",
            description = "All connections must be up within this (default ${DEFAULT-VALUE}).")
    Duration connectTimeout;

    @Option(names = "--max-messages", paramLabel = "N", description = "Most messages per sender (default ${DEFAULT-VALUE}).")
    long maxMessages = LoadConfig.DEFAULT_MAX_MESSAGES;

    @Option(names = "--client-threads", paramLabel = "N", description = "Load generator event loops (default ${DEFAULT-VALUE}).")
    int clientThreads = LoadConfig.DEFAULT_CLIENT_THREADS;

    @Option(names = "--bind", paramLabel = "ADDR", split = ",",
            description = "Loopback source addresses to spread connections over (e.g. 127.0.0.2,127.0.0.3) when ports run short.")
    List<String> bind = new ArrayList<>();

    @Option(names = "--topic", paramLabel = "NAME", description = "Topic name prefix (default ${DEFAULT-VALUE}).")
    String topic = "bench";

    @Option(names = "--repeat", paramLabel = "N", description = "Runs, each with a fresh topic (and fresh relay with --spawn/--in-process); N > 1 adds median and range (default ${DEFAULT-VALUE}).")
    int repeat = 1;

    @Option(names = "--json", paramLabel = "FILE", description = "Append one JSON line per run (and summary) to FILE; without it they go to stdout.")
    String json;

    @Option(names = "--latency-trace", paramLabel = "FILE",
            description = "Write latency by moment of arrival (per 5 ms: deliveries, mean, slowest) to FILE; with --repeat, FILE-<run>.")
    Path latencyTrace;

    @Override
    public Integer call() {
        if (repeat < 1 || repeat > MAX_REPEAT) {
            System.err.println("load: --repeat: " + repeat + " (expected: 1.." + MAX_REPEAT + ")");
            return 2;
        }
        if (slow != null && relayChoice.url != null) {
            System.err.println("load: --slow: only with --spawn or --in-process (the rule is given to the relay when it starts)");
            return 2;
        }
        if (pid > 0 && relayChoice.url == null) {
            System.err.println("load: --pid: only with --url (a spawned relay is sampled anyway)");
            return 2;
        }
        try (PrintStream jsonOut = json == null ? null
                : new PrintStream(new FileOutputStream(json, true), true, StandardCharsets.UTF_8)) {
            PrintStream out = System.out;
            ResultTable.header(out);
            List<RunResult> runs = new ArrayList<>();
            for (int i = 1; i <= repeat; i++) {
                RunResult r;
                try (Relay relay = openRelay()) {
                    LoadConfig config = toConfig(relay.baseUri(), i);
                    try {
                        r = new LoadRun(config, relay, i).run();
                    } catch (IOException | IllegalStateException e) {
                        throw new IOException(e.getMessage() + relay.stateAfterFailure(), e);
                    }
                }
                runs.add(r);
                ResultTable.row(out, "run " + i, r);
                emit(jsonOut, r);
            }
            if (repeat > 1) {
                RunResult s = Summary.of(runs);
                ResultTable.row(out, "median", s);
                ResultTable.spread(out, s);
                emit(jsonOut, s);
            }
            return 0;
        } catch (IllegalArgumentException e) {
            System.err.println("load: " + e.getMessage());
            return 2;
        } catch (IOException | IllegalStateException e) {
            System.err.println("load: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            System.err.println("load: interrupted");
            return 1;
        }
    }

    private static void emit(PrintStream jsonOut, RunResult r) {
        if (jsonOut != null) {
            jsonOut.println(r.toJson());
        } else {
            System.out.println(r.toJson());
        }
    }

    private Relay openRelay() throws IOException, InterruptedException {
        if (relayChoice.inProcess) {
            return new InProcessRelay(relayLoops, slow == null ? SlowPolicy.DROP : slow, scenario.backpressurePattern());
        }
        if (relayChoice.spawn != null) {
            return new SpawnedRelay(slow == null ? relayChoice.spawn
                    : slow.apply(relayChoice.spawn, scenario.backpressurePattern()), spawnSession);
        }
        return new ExternalRelay(LoadConfig.checkLoopback(relayChoice.url), pid);
    }

    /** The trace file of run {@code i}: one run, the file named; several, one each. */
    private Path traceFile(int i) {
        if (latencyTrace == null || repeat == 1) {
            return latencyTrace;
        }
        return latencyTrace.resolveSibling(latencyTrace.getFileName() + "-" + i);
    }

    /** The configuration of run {@code run} (1..repeat). */
    LoadConfig toConfig(URI baseUri, int run) {
        return LoadConfig.builder(scenario, baseUri)
                .label(label)
                .topic(topic)
                .size(size)
                .count(count)
                .groups(groups)
                .dataTopics(dataTopics)
                .stalled(stalled)
                .connectRate(connectRate)
                .rate(rate)
                .window(window)
                .batch(batch)
                .warmup(warmup)
                .duration(duration)
                .drain(drain)
                .settle(settle)
                .connectTimeout(connectTimeout)
                .maxMessages(maxMessages)
                .clientThreads(clientThreads)
                .bindAddresses(bind)
                .slow(slow)
                .latencyTrace(traceFile(run))
                .build();
    }
}

package dev.crossbar.bench.soak;

import java.io.PrintWriter;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * An hour of a campus's mixed traffic across two Crossbar nodes (child JVMs from the relay's fat jar,
 * the README's stream rules) joined through two {@code nats-server}s, with a fault every few minutes,
 * looking for silent holes.
 *
 * <ul>
 *   <li>Cameras: a publisher on one node, viewers spread over both ({@code start=keyframe}, 30
 *       MPEG-TS messages of 4 KiB a second); one more camera with a viewer that stops reading.</li>
 *   <li>Data topics: two members each (N:N), on different nodes, 10 texts of 200 B a second each.</li>
 *   <li>A lossless file ({@code slow=backpressure}) every minute, read on both nodes.</li>
 *   <li>Clients leaving and coming back (on the other node); every client reconnects when its
 *       connection ends, as the examples' clients do.</li>
 *   <li>Faults in turn, each a second into a file's transfer: SIGKILL a NATS server (started again
 *       5 s later), SIGSTOP one past three of the nodes' pings (10 s each), SIGKILL a node (started
 *       again 5 s later).</li>
 * </ul>
 *
 * <p>Every minute it prints and writes ({@code soak.jsonl}) each process's RSS and CPU, the live
 * streams' messages sent, received, missing and counted by the nodes, and the files' outcomes. A
 * <b>silent hole</b> is a live message missing at a client beyond what the nodes counted as dropped
 * or lost, or a file receiver left incomplete and told nothing. It exits 1 if it found any.
 *
 * <pre>
 * java -cp crossbar-bench/target/benchmarks.jar dev.crossbar.bench.soak.Soak --minutes 60
 * </pre>
 */
@Command(name = "soak", mixinStandardHelpOptions = true, description = "Two nodes, two NATS servers, an hour of campus traffic with faults.")
public final class Soak implements Callable<Integer> {

    @Option(names = "--minutes", defaultValue = "60", description = "How long the traffic runs (default ${DEFAULT-VALUE}).")
    int minutes;

    @Option(names = "--fault-every", defaultValue = "4", description = "Minutes between faults (default ${DEFAULT-VALUE}); 0: none.")
    int faultEvery;

    @Option(names = "--cameras", defaultValue = "40", description = "Video streams (default ${DEFAULT-VALUE}).")
    int cameras;

    @Option(names = "--viewers", defaultValue = "3", description = "Viewers per camera (default ${DEFAULT-VALUE}).")
    int viewers;

    @Option(names = "--topics", defaultValue = "100", description = "Data topics, two members each (default ${DEFAULT-VALUE}).")
    int topics;

    @Option(names = "--file-mib", defaultValue = "256", description = "Size of the lossless file sent every minute, in MiB (default ${DEFAULT-VALUE}).")
    int fileMib;

    @Option(names = "--jar", defaultValue = "crossbar-server/target/crossbar.jar", description = "The relay's fat jar (default ${DEFAULT-VALUE}).")
    Path jar;

    @Option(names = "--nats-server", defaultValue = "nats-server", description = "The nats-server executable (default ${DEFAULT-VALUE}).")
    String natsServer;

    @Option(names = "--node-jvm-option", description = "A JVM option added to both nodes' (repeatable), e.g. "
            + "-Dio.netty.recycler.maxCapacityPerThread=0.")
    List<String> nodeJvmOptions = new ArrayList<>();

    @Option(names = "--out", defaultValue = "soak-results", description = "Directory for logs and soak.jsonl (default ${DEFAULT-VALUE}).")
    Path out;

    /** What the soak's clients share: the nodes, the ledger, the timers. */
    static final class Cluster {
        private final Node[] nodes;
        private final Ledger ledger;
        private final HttpClient http = HttpClient.newHttpClient();
        private final ScheduledExecutorService timer = Executors.newScheduledThreadPool(4, daemons("soak-timer"));
        private final long startNanos = System.nanoTime();
        private final PrintWriter events;
        private volatile boolean running = true;

        Cluster(Node[] nodes, PrintWriter events, Path out) {
            this.nodes = nodes;
            this.ledger = new Ledger(out);
            this.events = events;
        }

        Node node(int i) {
            return nodes[i];
        }

        int nodeCount() {
            return nodes.length;
        }

        Ledger ledger() {
            return ledger;
        }

        HttpClient http() {
            return http;
        }

        ScheduledExecutorService timer() {
            return timer;
        }

        boolean running() {
            return running;
        }

        /** The clients stop coming back. */
        void stop() {
            running = false;
        }

        double minutes() {
            return (System.nanoTime() - startNanos) / 60e9;
        }

        /** Prints an event, with the soak's minute, and keeps it in {@code events.log}. */
        synchronized void log(String event) {
            String line = String.format("[%6.2f min] %s", minutes(), event);
            System.out.println(line);
            events.println(line);
            events.flush();
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new Soak()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        Files.createDirectories(out);
        List<Integer> ports = NatsPair.freePorts(2);
        try (PrintWriter events = new PrintWriter(Files.newBufferedWriter(out.resolve("events.log")));
             PrintWriter rows = new PrintWriter(Files.newBufferedWriter(out.resolve("soak.jsonl")));
             NatsPair nats = new NatsPair(out, natsServer)) {
            List<String> routes = List.of("--route", "/cam/**:start=keyframe,max-latency=500ms",
                    "--route", "/sensor/**:start=last", "--route", "/files/**:slow=backpressure");
            Node[] nodes = new Node[2];
            for (int i = 0; i < 2; i++) {
                List<String> flags = new ArrayList<>(List.of("--nats", nats.url(i) + "," + nats.url(1 - i)));
                flags.addAll(routes);
                nodes[i] = new Node(out, "node-" + (char) ('a' + i), ports.get(i), jar, nodeJvmOptions, flags);
                nodes[i].start();
            }
            Cluster c = new Cluster(nodes, events, out);
            try {
                c.log("started: nodes on ports " + ports + ", NATS " + nats.url(0) + " " + nats.url(1) + "; "
                        + cameras + " cameras x " + viewers + " viewers, " + topics + " data topics x 2, a "
                        + fileMib + " MiB file a minute, a stalled viewer; a fault every " + faultEvery + " min, "
                        + minutes + " min");
                Traffic traffic = new Traffic(c, cameras, viewers, topics, fileMib);
                traffic.start();
                Counters counters = new Counters(c, nats, rows);
                // Its own thread: the clients' reconnects after a node's death must not delay the figures.
                ScheduledExecutorService sampling = Executors.newSingleThreadScheduledExecutor(daemons("soak-counters"));
                sampling.scheduleAtFixedRate(counters::sample, 5, 5, TimeUnit.SECONDS);
                sampling.scheduleAtFixedRate(counters::row, 1, 1, TimeUnit.MINUTES);
                // Faults on a thread of their own: a freeze lasts longer than a reconnect may wait.
                Faults faults = new Faults(c, nats, minutes - 2);
                ScheduledExecutorService faulting = Executors.newSingleThreadScheduledExecutor(daemons("soak-faults"));
                if (faultEvery > 0) {
                    // A second into a file's transfer (one starts at each minute's half): every fault
                    // meets a lossless stream in flight besides the live ones.
                    faulting.scheduleAtFixedRate(faults::next, faultEvery * 60L + Traffic.FIRST_FILE_SECONDS + 1,
                            faultEvery * 60L, TimeUnit.SECONDS);
                }
                Thread.sleep(TimeUnit.MINUTES.toMillis(minutes));
                faulting.shutdownNow();
                c.log("traffic stops; files in flight finish");
                traffic.stop();
                sampling.shutdownNow();
                Thread.sleep(5000);
                counters.sample();
                counters.row();
                int silent = counters.summary();
                c.stop();
                return silent == 0 ? 0 : 1;
            } finally {
                c.stop();
                c.timer().shutdownNow();
                for (Node n : nodes) {
                    if (n != null) {
                        n.close();
                    }
                }
            }
        }
    }

    static java.util.concurrent.ThreadFactory daemons(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }
}

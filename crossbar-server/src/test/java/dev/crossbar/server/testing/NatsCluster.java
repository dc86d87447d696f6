package dev.crossbar.server.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Real {@code nats-server} processes on loopback: a full-mesh cluster (routes between every pair,
 * monitoring on) or a single server. Ports are free ephemeral ones; each server logs to a file in the
 * given directory. {@link #close()} kills every process it started, forcibly if need be.
 *
 * <p>The servers run without a system account ({@code no_sys_acc}), so the monitoring counters
 * ({@code /subsz}, {@code /routez}, {@code /connz}) show Crossbar's traffic and nothing else.
 */
public final class NatsCluster implements AutoCloseable {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path dir;
    private final int[] clientPorts;
    private final int[] clusterPorts;
    private final int[] monitorPorts;
    private final Process[] processes;
    /** What each server was started with, to start it again the same way ({@link #restart}). */
    private Path conf;
    private String routes;
    /** Whether the servers run JetStream ({@code -js}), each with its store under {@code dir}. */
    private boolean jetStream;

    private NatsCluster(Path dir, int n) {
        this.dir = dir;
        this.clientPorts = new int[n];
        this.clusterPorts = new int[n];
        this.monitorPorts = new int[n];
        this.processes = new Process[n];
    }

    /** The {@code nats-server} executable; a test without it skips, or fails under CI ({@link Tools}). */
    public static String executable() {
        return Tools.require("nats-server", "nats-server");
    }

    /** Attempts at starting a cluster: a port picked free may be taken before nats-server binds it. */
    private static final int START_ATTEMPTS = 3;

    /**
     * Starts {@code n} servers joined by routes and waits until every route is up. If a server
     * does not come up (typically: one of its ports was taken between picking and binding), the
     * whole cluster is started again on fresh ports, up to {@value #START_ATTEMPTS} times.
     */
    public static NatsCluster start(Path dir, int n) {
        return start(dir, n, false);
    }

    /** As {@link #start(Path, int)}, the servers running JetStream ({@code -js}) when {@code jetStream}. */
    public static NatsCluster start(Path dir, int n, boolean jetStream) {
        for (int attempt = 1; ; attempt++) {
            NatsCluster c = new NatsCluster(dir, n);
            c.jetStream = jetStream;
            try {
                c.startAll(n > 1);
                return c;
            } catch (RuntimeException | Error e) {
                c.close();
                if (attempt == START_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    /** Starts one server with no cluster on {@code clientPort}. */
    public static NatsCluster single(Path dir, int clientPort) {
        NatsCluster c = new NatsCluster(dir, 1);
        c.clientPorts[0] = clientPort;
        try {
            c.startAll(false);
            return c;
        } catch (RuntimeException | Error e) {
            c.close();
            throw e;
        }
    }

    public static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int distinctFreePort(java.util.Set<Integer> taken) {
        int port;
        do {
            port = freePort();
        } while (!taken.add(port));
        return port;
    }

    private void startAll(boolean clustered) {
        try {
            conf = dir.resolve("nats.conf");
            Files.writeString(conf, "no_sys_acc: true\n");
            // Distinct ports: two free-port picks can return the same port once the first is closed.
            java.util.Set<Integer> taken = new java.util.HashSet<>();
            for (int i = 0; i < processes.length; i++) {
                if (clientPorts[i] == 0) {
                    clientPorts[i] = distinctFreePort(taken);
                } else {
                    taken.add(clientPorts[i]);
                }
            }
            for (int i = 0; i < processes.length; i++) {
                clusterPorts[i] = distinctFreePort(taken);
                monitorPorts[i] = distinctFreePort(taken);
            }
            routes = !clustered ? null : java.util.Arrays.stream(clusterPorts).mapToObj(p -> "nats://127.0.0.1:" + p)
                    .collect(Collectors.joining(","));
            for (int i = 0; i < processes.length; i++) {
                processes[i] = launch(i, conf, routes);
            }
            for (int i = 0; i < processes.length; i++) {
                awaitUp(i);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Waits until server {@code i} answers on its monitoring port, accepts clients and has a route to
     * every other. nats-server opens its monitoring port before its client port (with JetStream on,
     * the store is set up in between), so the monitoring answer alone does not mean a client can connect.
     */
    private void awaitUp(int i) {
        RelayServerExtension.await("nats-server " + i + " monitoring", Duration.ofSeconds(10),
                () -> monitorOrNull(i, "/varz") != null);
        RelayServerExtension.await("nats-server " + i + " client port", Duration.ofSeconds(10),
                () -> accepts(clientPorts[i]));
        if (routes != null) {
            RelayServerExtension.await("nats-server " + i + " routes", Duration.ofSeconds(10), () -> {
                JsonNode r = monitorOrNull(i, "/routez");
                return r != null && r.path("num_routes").asInt() == processes.length - 1;
            });
        }
    }

    private static boolean accepts(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Starts server {@code i} again (after {@link #kill}) on the same ports with the same routes, and
     * waits until it is up and routed to the others.
     */
    public void restart(int i) {
        try {
            processes[i] = launch(i, conf, routes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        awaitUp(i);
    }

    private Process launch(int i, Path conf, String routes) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(executable(), "-c", conf.toString(), "-a", "127.0.0.1",
                "-p", String.valueOf(clientPorts[i]), "-m", String.valueOf(monitorPorts[i]), "-n", "nats-" + i));
        if (jetStream) {
            cmd.addAll(List.of("-js", "-sd", dir.resolve("js-" + i).toString()));
        }
        if (routes != null) {
            cmd.addAll(List.of("--cluster_name", "crossbar-test", "--cluster", "nats://127.0.0.1:" + clusterPorts[i],
                    "--routes", routes));
        }
        File log = dir.resolve("nats-" + i + ".log").toFile();
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log)).start();
    }

    public int size() {
        return processes.length;
    }

    public String url(int i) {
        return "nats://127.0.0.1:" + clientPorts[i];
    }

    public int monitorPort(int i) {
        return monitorPorts[i];
    }

    /** GETs a monitoring endpoint of server {@code i} ({@code /varz}, {@code /connz?subs=1}, ...). */
    public JsonNode monitor(int i, String path) {
        JsonNode n = monitorOrNull(i, path);
        if (n == null) {
            throw new AssertionError("nats-server " + i + " monitoring " + path + " did not answer");
        }
        return n;
    }

    private JsonNode monitorOrNull(int i, String path) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + monitorPorts[i] + path))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? JSON.readTree(r.body()) : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** Subjects of the relays' statistics link (NatsStatsLink), which every node holds whatever its topics. */
    public static final String STATS_SUBJECTS = "crossbar._stats.";
    /** Subjects of the relays' admin link (NatsAdminLink: disconnects, revocations without JetStream), likewise. */
    public static final String ADMIN_SUBJECTS = "crossbar._admin.";

    /**
     * Whether {@code subject} is one every node holds whatever its topics (not a topic's): the
     * statistics and admin links', and the NATS client's reply inbox (the admin link asks the
     * server about JetStream at start).
     */
    private static boolean linkSubject(String subject) {
        return subject.startsWith(STATS_SUBJECTS) || subject.startsWith(ADMIN_SUBJECTS) || subject.startsWith("_INBOX.");
    }

    /**
     * Topic subscriptions server {@code i} holds, its clients' ({@code /subsz}) and those its routes
     * told it of ({@code /routez}) together: what {@code num_subscriptions} counts, less the statistics
     * link's subscriptions (three per node, whatever its topics).
     */
    public int subscriptions(int i) {
        int n = 0;
        for (JsonNode s : monitor(i, "/subsz?subs=1&limit=1000000").path("subscriptions_list")) {
            if (!linkSubject(s.path("subject").asText())) {
                n++;
            }
        }
        for (JsonNode route : monitor(i, "/routez?subs=1").path("routes")) {
            for (JsonNode s : route.path("subscriptions_list")) {
                if (!linkSubject(s.asText())) {
                    n++;
                }
            }
        }
        return n;
    }

    /**
     * The client connection named {@code name} on server {@code i}, from {@code /connz}, or null; its
     * {@code subscriptions_list} holds topic subscriptions only (the statistics link's are removed).
     */
    public JsonNode connection(int i, String name) {
        for (JsonNode c : monitor(i, "/connz?subs=1").path("connections")) {
            if (name.equals(c.path("name").asText())) {
                if (c.path("subscriptions_list").isArray()) {
                    com.fasterxml.jackson.databind.node.ArrayNode subs = (com.fasterxml.jackson.databind.node.ArrayNode) c.get("subscriptions_list");
                    for (int k = subs.size() - 1; k >= 0; k--) {
                        if (linkSubject(subs.get(k).asText())) {
                            subs.remove(k);
                        }
                    }
                }
                return c;
            }
        }
        return null;
    }

    /** Messages server {@code i} received over its routes from the other servers. */
    public long routeInMsgs(int i) {
        long sum = 0;
        for (JsonNode r : monitor(i, "/routez").path("routes")) {
            sum += r.path("in_msgs").asLong();
        }
        return sum;
    }

    public long routeInBytes(int i) {
        long sum = 0;
        for (JsonNode r : monitor(i, "/routez").path("routes")) {
            sum += r.path("in_bytes").asLong();
        }
        return sum;
    }

    /** Stops server {@code i} without closing its sockets (SIGSTOP): a hung server, or a stalled link. */
    public void pause(int i) {
        signal(i, "-STOP");
    }

    /** Lets a paused server {@code i} run again (SIGCONT). */
    public void resume(int i) {
        signal(i, "-CONT");
    }

    private void signal(int i, String signal) {
        try {
            Process kill = new ProcessBuilder("kill", signal, Long.toString(processes[i].pid())).inheritIO().start();
            if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new AssertionError("kill " + signal + " nats-server " + i + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted");
        }
    }

    /** Kills server {@code i} at once (SIGKILL), as a crash would. */
    public void kill(int i) {
        Process p = processes[i];
        if (p != null) {
            p.destroyForcibly();
            try {
                p.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        for (int i = 0; i < processes.length; i++) {
            if (processes[i] != null) {
                // A paused server ignores this until continued; the forcible kill below still ends it.
                processes[i].destroy();
            }
        }
        for (int i = 0; i < processes.length; i++) {
            Process p = processes[i];
            if (p == null) {
                continue;
            }
            try {
                if (!p.waitFor(3, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(3, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
            }
        }
    }
}

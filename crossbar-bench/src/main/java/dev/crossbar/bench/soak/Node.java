package dev.crossbar.bench.soak;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One Crossbar node as deployed: {@code java -jar crossbar.jar} with operations.md's settings
 * ({@link #JVM_FLAGS}, {@code MALLOC_ARENA_MAX=2}) in a process of its own, on a fixed
 * loopback port (so its clients come back to the same address after a restart), logging to
 * {@code <name>.log}. It can be killed as a crash would (SIGKILL) and started again.
 */
final class Node implements AutoCloseable {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    final String name;
    final int port;
    private final List<String> command;
    private final File log;
    private volatile Process process;
    /** How many times it was started: counters start from zero with each. */
    private volatile int starts;

    /** The JVM as operations.md runs it ("Running"): a bounded heap and direct memory, the serial collector. */
    static final List<String> JVM_FLAGS = List.of("-Xms64m", "-Xmn12m", "-Xmx256m", "-XX:MaxDirectMemorySize=256m",
            "-XX:+UseSerialGC", "-XX:-UsePerfData", "-XX:TrimNativeHeapInterval=5000",
            "-Dio.netty.leakDetection.level=disabled");

    Node(Path dir, String name, int port, Path jar, List<String> jvmOptions, List<String> flags) {
        this.name = name;
        this.port = port;
        this.log = dir.resolve(name + ".log").toFile();
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java")));
        cmd.addAll(JVM_FLAGS);
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-jar", jar.toString(), "--listen", "127.0.0.1:" + port, "--node-name", name));
        cmd.addAll(flags);
        this.command = List.copyOf(cmd);
    }

    /** Starts the node and waits (at most 60 s) until {@code /healthz} says it serves, its NATS link up. */
    void start() throws IOException, InterruptedException {
        ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log));
        b.environment().put("MALLOC_ARENA_MAX", "2");
        process = b.start();
        starts++;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!healthy()) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new IOException(name + " did not become healthy; see " + log);
            }
            Thread.sleep(200);
        }
    }

    private boolean healthy() throws InterruptedException {
        try {
            return get("/healthz").statusCode() == 200;
        } catch (IOException e) {
            return false;
        }
    }

    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    long pid() {
        return process.pid();
    }

    int starts() {
        return starts;
    }

    URI ws(String path) {
        return URI.create("ws://127.0.0.1:" + port + path);
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * The node's Prometheus counters whose names start with {@code crossbar_}, each summed over its
     * labels; empty if it does not answer (it is down).
     */
    Map<String, Double> counters() throws InterruptedException {
        Map<String, Double> sums = new HashMap<>();
        try {
            HttpResponse<String> r = get("/metrics");
            if (r.statusCode() != 200) {
                return sums;
            }
            for (String line : r.body().split("\n")) {
                if (!line.startsWith("crossbar_")) {
                    continue;
                }
                int nameEnd = line.indexOf('{') >= 0 ? line.indexOf('{') : line.indexOf(' ');
                String value = line.substring(line.lastIndexOf(' ') + 1);
                sums.merge(line.substring(0, nameEnd), Double.parseDouble(value), Double::sum);
            }
        } catch (IOException | NumberFormatException e) {
            sums.clear();
        }
        return sums;
    }

    /**
     * Messages the node's statistics say the topic {@code topic} ({@code /out/cam/x} for a 1:N
     * stream) dropped, from one snapshot of {@code /ws}; -1 if the node or the topic is not there.
     */
    long topicDropped(String topic) throws InterruptedException {
        CompletableFuture<String> first = new CompletableFuture<>();
        Ws w;
        try {
            w = Ws.connect(HTTP, ws("/ws"), (payload, text) ->
                    first.complete(new String(payload, java.nio.charset.StandardCharsets.UTF_8)));
        } catch (Exception e) {
            return -1;
        }
        try {
            JsonNode snapshot = JSON.readTree(first.get(10, TimeUnit.SECONDS));
            for (JsonNode t : snapshot.path("topics")) {
                if (t.path("topic").asText().equals(topic)) {
                    return t.path("dropped").asLong();
                }
            }
            return -1;
        } catch (Exception e) {
            return -1;
        } finally {
            w.abort();
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (alive()) {
            kill();
        }
    }
}

package dev.crossbar.server.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
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

/**
 * A Crossbar node in a JVM of its own, started from the built jar ({@code java -jar
 * target/crossbar.jar}), so that a test can kill it as a crash would: SIGKILL, no shutdown hook, no
 * farewell to the other nodes. Its output goes to {@code <name>.log} in the given directory.
 * {@link #close()} kills it if it still runs.
 */
public final class CrossbarProcess implements AutoCloseable {

    /** The relay's fat jar, built by {@code package}: failsafe's integration tests run after it. */
    public static final Path JAR = Path.of("target", "crossbar.jar");

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final Process process;
    private final int port;
    private final Path log;

    private CrossbarProcess(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /** Attempts at starting: a port picked free may be taken before the node binds it. */
    private static final int START_ATTEMPTS = 3;

    /**
     * Starts a node named {@code name} on a free loopback port with the given further flags, and waits
     * (at most 30 s) until its {@code /healthz} answers 200: serving, and its cluster link up. A node
     * that exits before (its port taken meanwhile) is started again on another, up to
     * {@value #START_ATTEMPTS} times.
     */
    public static CrossbarProcess start(Path dir, String name, List<String> flags) {
        for (int attempt = 1; ; attempt++) {
            try {
                return startOnce(dir, name, flags);
            } catch (AssertionError e) {
                if (attempt == START_ATTEMPTS || !e.getMessage().contains(" exited with ")) {
                    throw e;
                }
            }
        }
    }

    private static CrossbarProcess startOnce(Path dir, String name, List<String> flags) {
        if (!Files.isReadable(JAR)) {
            throw new AssertionError(JAR.toAbsolutePath() + " missing: run this test through failsafe "
                    + "(mvn verify), which builds the jar first");
        }
        int port = NatsCluster.freePort();
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "-Xmx512m", "-XX:+UseSerialGC", "-jar", JAR.toString(),
                "--listen", "127.0.0.1:" + port, "--node-name", name));
        cmd.addAll(flags);
        Path log = dir.resolve(name + ".log");
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        CrossbarProcess node = new CrossbarProcess(p, port, log);
        try {
            RelayServerExtension.await(name + " (pid " + p.pid() + ") healthy", Duration.ofSeconds(30), () -> {
                if (!p.isAlive()) {
                    throw new AssertionError(name + " exited with " + p.exitValue() + ":\n" + node.logTail());
                }
                return node.healthy();
            });
        } catch (RuntimeException | Error e) {
            node.close();
            throw e;
        }
        return node;
    }

    private boolean healthy() {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The last lines the node wrote, for a failure message. */
    public String logTail() {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    public int port() {
        return port;
    }

    public URI ws(String path) {
        return URI.create("ws://127.0.0.1:" + port + path);
    }

    /** Kills the node at once (SIGKILL), as a crash would, and waits for it to be gone. */
    public void kill() {
        process.destroyForcibly();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                throw new AssertionError("node pid " + process.pid() + " still alive 10 s after SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            kill();
        }
    }
}

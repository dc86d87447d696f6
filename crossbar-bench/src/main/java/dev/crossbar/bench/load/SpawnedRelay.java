package dev.crossbar.bench.load;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A relay the tool starts as its own process from a command line in which {@code {port}} is
 * replaced by a free loopback port, e.g.
 * {@code java -jar crossbar-server/target/crossbar.jar --listen 127.0.0.1:{port}} or
 * {@code /tmp/gocrossbar/run.sh {port}}. The command runs under {@code bash -c "exec ..."} so the
 * sampled pid is the relay's own. Stopped with SIGTERM, then killed if it lingers.
 */
final class SpawnedRelay implements Relay {

    /** How long a relay may take to start listening (a JVM needs about a second). */
    static final long START_TIMEOUT_MILLIS = 30_000;
    static final long STOP_TIMEOUT_MILLIS = 5_000;
    static final String PORT_PLACEHOLDER = "{port}";

    private final Process process;
    private final int port;
    private final File log;

    SpawnedRelay(String commandTemplate) throws IOException, InterruptedException {
        if (!commandTemplate.contains(PORT_PLACEHOLDER)) {
            throw new IllegalArgumentException("--spawn: '" + commandTemplate + "' (expected: a command containing "
                    + PORT_PLACEHOLDER + " where the port goes)");
        }
        this.port = freePort();
        String command = commandTemplate.replace(PORT_PLACEHOLDER, Integer.toString(port));
        this.log = Files.createTempFile("bench-relay-", ".log").toFile();
        this.process = new ProcessBuilder(List.of("bash", "-c", "exec " + command))
                .redirectErrorStream(true)
                .redirectOutput(log)
                .start();
        awaitListening();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private void awaitListening() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MILLIS);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("relay exited with " + process.exitValue() + " before listening; see " + log);
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                Thread.sleep(50);
            }
        }
        close();
        throw new IOException("relay not listening on 127.0.0.1:" + port + " after " + START_TIMEOUT_MILLIS + " ms; see " + log);
    }

    @Override
    public URI baseUri() {
        return URI.create("ws://127.0.0.1:" + port);
    }

    @Override
    public long pid() {
        return process.pid();
    }

    @Override
    public String kind() {
        return "spawned";
    }

    @Override
    public long liveHeapBytes() {
        return JvmHeap.liveHeapBytes(process.pid());
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(STOP_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(STOP_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        if (log.length() == 0 || process.exitValue() == 0 || process.exitValue() == 143) {
            log.delete();
        }
    }
}

package dev.crossbar.bench.load;

import static java.util.Objects.requireNonNull;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * A relay the tool starts as its own process from a command line in which {@code {port}} is
 * replaced by a free loopback port, e.g.
 * {@code java -jar crossbar-server/target/crossbar.jar --listen 127.0.0.1:{port}} or
 * {@code env LISTEN=127.0.0.1:{port} node relay.js}.
 *
 * <p>By default the relay runs in its own session, {@code setsid bash -c "exec COMMAND"}, as a
 * deployed relay runs under systemd or a container runtime: with the kernel's autogroup on, a new
 * session is its own scheduling group, so the relay is not scheduled as part of the load
 * generator's group (which changed Crossbar's figures 2-3x). {@link Session#INHERIT} keeps the
 * earlier behaviour, a plain child, {@code bash -c "exec COMMAND"}. Either way {@code setsid} and
 * {@code bash} exec rather than fork (the child of a JVM is never a process-group leader, so
 * {@code setsid} needs no fork), so the process this tool holds, samples for CPU and RSS, and stops
 * with SIGTERM (then SIGKILL if it lingers) is the relay itself; a command must therefore end in
 * the relay (use {@code env VAR=value relay}, or a script that {@code exec}s it). Checked at start:
 * in its own session the relay must be its session's leader.
 */
final class SpawnedRelay implements Relay {

    /** Which session, and so which scheduling group, the relay runs in. */
    enum Session {
        /** Its own session: {@code setsid}. */
        OWN,
        /** This tool's session: a plain child process. */
        INHERIT;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    static final Session DEFAULT_SESSION = Session.OWN;
    /** How long a relay may take to start listening (a JVM needs about a second). */
    static final long START_TIMEOUT_MILLIS = 30_000;
    static final long STOP_TIMEOUT_MILLIS = 5_000;
    static final String PORT_PLACEHOLDER = "{port}";
    /** How long a relay found running after a failed run is given to finish exiting. */
    static final long EXIT_WAIT_MILLIS = 2_000;
    /** Lines of the relay's output quoted when a run against it fails. */
    static final int LOG_TAIL_LINES = 20;

    private final Process process;
    private final Session session;
    private final int port;
    private final File log;
    /** Stops the relay if this JVM exits first (interrupted, or ended by a timeout's SIGTERM). */
    private final Thread stopOnExit;
    /** A run against this relay failed: its output is kept, whatever its exit status. */
    private boolean keepLog;

    SpawnedRelay(String commandTemplate, Session session) throws IOException, InterruptedException {
        requireNonNull(commandTemplate, "commandTemplate");
        this.session = requireNonNull(session, "session");
        if (!commandTemplate.contains(PORT_PLACEHOLDER)) {
            throw new IllegalArgumentException("--spawn: '" + commandTemplate + "' (expected: a command containing "
                    + PORT_PLACEHOLDER + " where the port goes)");
        }
        this.port = freePort();
        String command = commandTemplate.replace(PORT_PLACEHOLDER, Integer.toString(port));
        this.log = Files.createTempFile("bench-relay-", ".log").toFile();
        this.process = new ProcessBuilder(argv(command, session))
                .redirectErrorStream(true)
                .redirectOutput(log)
                .start();
        this.stopOnExit = new Thread(this::stop, "bench-relay-stop");
        Runtime.getRuntime().addShutdownHook(stopOnExit);
        try {
            awaitListening();
            checkSession();
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /** The command line that starts {@code command} in the given session, exec'ing all the way. */
    static List<String> argv(String command, Session session) {
        List<String> argv = new ArrayList<>();
        if (session == Session.OWN) {
            argv.add("setsid");
        }
        argv.addAll(List.of("bash", "-c", "exec " + command));
        return argv;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
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
        throw new IOException("relay not listening on 127.0.0.1:" + port + " after " + START_TIMEOUT_MILLIS + " ms; see " + log);
    }

    /** The relay's own session must be led by the relay: else the pid sampled would not be the relay's. */
    private void checkSession() throws IOException {
        long sid = ProcStats.sessionId(Long.toString(process.pid()));
        long ours = ProcStats.sessionId("self");
        if (session == Session.OWN && sid != process.pid()) {
            throw new IOException("relay pid " + process.pid() + " is in session " + sid
                    + " (expected: its own, " + process.pid() + "; is setsid installed?)");
        }
        if (session == Session.INHERIT && sid != ours) {
            throw new IOException("relay pid " + process.pid() + " is in session " + sid + " (expected: ours, " + ours + ")");
        }
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
    public String session() {
        return session.label();
    }

    @Override
    public long liveHeapBytes() {
        return JvmHeap.liveHeapBytes(process.pid());
    }

    /**
     * Whether the relay is still running or how it exited, and the last lines of its output (kept
     * in its log file, named here). A run that cannot connect to a relay that answered the start
     * probe means the relay died, or stopped listening, or the probe reached another listener on
     * its port; this tells which. A relay that is still running is given {@link #EXIT_WAIT_MILLIS}
     * to finish exiting: one that closed its port as it died is reported as exited.
     */
    @Override
    public String stateAfterFailure() {
        keepLog = true;
        String state;
        try {
            state = process.waitFor(EXIT_WAIT_MILLIS, TimeUnit.MILLISECONDS) ? "exited with " + process.exitValue()
                    : "still running";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            state = process.isAlive() ? "still running" : "exited with " + process.exitValue();
        }
        String tail;
        try {
            List<String> lines = Files.readAllLines(log.toPath());
            tail = lines.isEmpty() ? "no output"
                    : "its output ends:\n  " + String.join("\n  ", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
        } catch (IOException e) {
            tail = "its output unreadable: " + e.getMessage();
        }
        return "\n  relay pid " + process.pid() + " on port " + port + ": " + state + "; kept in " + log + ", " + tail;
    }

    /** SIGTERM, then SIGKILL after {@link #STOP_TIMEOUT_MILLIS}. */
    private void stop() {
        process.destroy();
        try {
            if (!process.waitFor(STOP_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(STOP_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    @Override
    public void close() {
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(stopOnExit);
        } catch (IllegalStateException exiting) {
            // Already shutting down: the hook is running or has run; nothing left to undo.
        }
        if (!keepLog && !process.isAlive() && (log.length() == 0 || process.exitValue() == 0 || process.exitValue() == 143)) {
            log.delete();
        }
    }
}

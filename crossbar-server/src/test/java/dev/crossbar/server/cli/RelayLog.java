package dev.crossbar.server.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The log of a relay started in a JVM of its own (the tests of signals and start-up). */
final class RelayLog {

    private static final Pattern LISTENING = Pattern.compile("Crossbar listening on 127\\.0\\.0\\.1:(\\d+)");

    private RelayLog() {
    }

    /**
     * The port from the relay's listening line, once that line and {@code alsoLogged} (if not null)
     * are in {@code log}; fails if the relay exits first or {@code bound} passes.
     */
    static int awaitPort(Path log, Process relay, Duration bound, String alsoLogged) throws Exception {
        long deadline = System.nanoTime() + bound.toNanos();
        while (System.nanoTime() < deadline) {
            String text = Files.readString(log);
            Matcher m = LISTENING.matcher(text);
            if (m.find() && (alsoLogged == null || text.contains(alsoLogged))) {
                return Integer.parseInt(m.group(1));
            }
            assertTrue(relay.isAlive(), "the relay exited:\n" + Files.readString(log));
            Thread.sleep(50);
        }
        throw new AssertionError("the relay did not start:\n" + Files.readString(log));
    }
}

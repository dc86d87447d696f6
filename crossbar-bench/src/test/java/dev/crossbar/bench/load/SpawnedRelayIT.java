package dev.crossbar.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A spawned relay is the process that is sampled and stopped, in its own session by default: a
 * small listener, started the way the tool starts relays (through setsid and bash, both exec'ing).
 */
class SpawnedRelayIT {

    /**
     * A stand-in relay: listens on the port given, accepts and drops connections until killed; with
     * a second argument {@code once}, only the first (the start probe's), then says so and exits 3.
     */
    static final class Listener {
        public static void main(String[] args) throws IOException {
            boolean once = args.length > 1 && args[1].equals("once");
            try (ServerSocket s = new ServerSocket(Integer.parseInt(args[0]), 50, InetAddress.getLoopbackAddress())) {
                do {
                    Socket c = s.accept();
                    c.close();
                } while (!once);
            }
            System.out.println("stand-in relay: leaving after one connection");
            System.exit(3);
        }
    }

    private static String listenerCommand() {
        return listenerCommand("");
    }

    private static String listenerCommand(String extraArgument) {
        // The test JVM's own java and class path (surefire's manifest jar names the test classes).
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return java + " -Xmx32m -cp '" + System.getProperty("java.class.path") + "' '"
                + Listener.class.getName() + "' {port} " + extraArgument;
    }

    private static String cmdline(long pid) throws IOException {
        return Files.readString(Path.of("/proc", Long.toString(pid), "cmdline")).replace('\0', ' ');
    }

    @Test
    void byDefaultTheRelayLeadsItsOwnSessionAndIsThePidSampled() throws Exception {
        long pid;
        try (SpawnedRelay relay = new SpawnedRelay(listenerCommand(), SpawnedRelay.DEFAULT_SESSION)) {
            pid = relay.pid();
            assertEquals("own", relay.session());
            assertEquals(pid, ProcStats.sessionId(Long.toString(pid)), "setsid: a session of its own");
            assertNotEquals(ProcStats.sessionId("self"), ProcStats.sessionId(Long.toString(pid)));
            assertTrue(cmdline(pid).contains(Listener.class.getName()), "the pid is the relay, not setsid or bash: "
                    + cmdline(pid));
            assertTrue(ProcStats.read(Long.toString(pid)).rssKb() > 0, "its /proc entry can be sampled");
        }
        assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "stopped on close");
    }

    @Test
    void inheritKeepsTheRelayInThisSession() throws Exception {
        try (SpawnedRelay relay = new SpawnedRelay(listenerCommand(), SpawnedRelay.Session.INHERIT)) {
            assertEquals("inherit", relay.session());
            assertEquals(ProcStats.sessionId("self"), ProcStats.sessionId(Long.toString(relay.pid())));
            assertTrue(cmdline(relay.pid()).contains(Listener.class.getName()), cmdline(relay.pid()));
        }
    }

    /**
     * A relay that answered the start probe and then went away (it died, stopped listening, or the
     * probe reached another listener on its port) fails the run with what became of it and the end
     * of its output, kept in its log.
     */
    @Test
    void aRunAgainstARelayThatWentAwaySaysWhatBecameOfIt() throws Exception {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream stderr = System.err;
        int rc;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            rc = LoadMain.run("pingpong", "--spawn", listenerCommand("once"), "--warmup", "0s", "--duration", "1s");
        } finally {
            System.setErr(stderr);
        }
        String message = err.toString(StandardCharsets.UTF_8);
        assertEquals(1, rc, message);
        assertTrue(message.contains("exited with 3"), message);
        assertTrue(message.contains("stand-in relay: leaving after one connection"), message);
        Matcher log = Pattern.compile("kept in (/\\S+\\.log)").matcher(message);
        assertTrue(log.find(), message);
        assertTrue(Files.exists(Path.of(log.group(1))), "the relay's output is kept: " + message);
        Files.delete(Path.of(log.group(1)));
    }

    @Test
    void theCommandLineExecsAllTheWay() {
        assertEquals(List.of("setsid", "bash", "-c", "exec relay --port 1"),
                SpawnedRelay.argv("relay --port 1", SpawnedRelay.Session.OWN));
        assertEquals(List.of("bash", "-c", "exec relay --port 1"),
                SpawnedRelay.argv("relay --port 1", SpawnedRelay.Session.INHERIT));
    }
}

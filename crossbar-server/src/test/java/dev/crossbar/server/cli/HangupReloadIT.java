package dev.crossbar.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.crossbar.server.testing.TestCertificates.Issued;
import dev.crossbar.server.testing.TestCertificates;
import dev.crossbar.server.testing.Tools;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real command in its own JVM: SIGHUP makes it serve a renewed certificate at once (the file
 * check is set to an hour, so only the signal can have done it), and it keeps running; started with
 * SIGHUP ignored, as under nohup, it says that it cannot reload by signal. The JDK provider and C1
 * only keep the child's start-up short; the provider is not what is tested here.
 */
class HangupReloadIT {

    @TempDir
    Path dir;

    private static X509Certificate presented(int port, SSLContext trust) throws Exception {
        try (SSLSocket socket = (SSLSocket) trust.getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(5000);
            socket.startHandshake();
            return (X509Certificate) socket.getSession().getPeerCertificates()[0];
        }
    }

    /** Whether this JVM was started with SIGHUP ignored (a build run under nohup): its children are too. */
    private static boolean hangupIgnoredHere() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("SigIgn:")) {
                return (Long.parseLong(line.substring(7).trim(), 16) & 1) != 0;
            }
        }
        return false;
    }

    private Process relay(List<String> prefix, Path cert, Path key, Path log) throws Exception {
        List<String> command = new ArrayList<>(prefix);
        command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), Main.class.getName(),
                "--listen", "127.0.0.1:0", "--event-loops", "1", "--tls-cert", cert.toString(), "--tls-key", key.toString(),
                "--tls-reload-interval", "1h", "--tls-provider", "jdk"));
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    @Test
    void aRelayStartedWithSighupIgnoredSaysItWillNotReloadOnIt() throws Exception {
        Issued first = TestCertificates.issue(dir, "first", "first.relay.test");
        Path log = dir.resolve("relay.log");
        // As nohup starts it: the shell ignores SIGHUP, and exec keeps it ignored for the JVM.
        Process relay = relay(List.of("sh", "-c", "trap '' HUP; exec \"$@\"", "sh"), first.certFile(), first.keyFile(), log);
        try {
            RelayLog.awaitPort(log, relay, Duration.ofSeconds(30), "TLS on");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!Files.readString(log).contains("SIGHUP is ignored by this process")) {
                assertTrue(System.nanoTime() < deadline, "no warning:\n" + Files.readString(log));
                Thread.sleep(50);
            }
        } finally {
            relay.destroy();
            relay.waitFor(10, TimeUnit.SECONDS);
            relay.destroyForcibly();
        }
    }

    @Test
    void sighupServesTheRenewedCertificateAndTheRelayKeepsRunning() throws Exception {
        // The relay inherits an ignored SIGHUP and cannot be made to take it back: skipped by hand,
        // failed under CI with the reason (CI must never skip), rather than timing out.
        boolean ignored = hangupIgnoredHere();
        String why = "SIGHUP is ignored by this build's JVM (run under nohup?), so by the relay too";
        assertFalse(ignored && Tools.underCi(), why);
        assumeFalse(ignored, why);
        Issued first = TestCertificates.issue(dir, "first", "first.relay.test");
        Issued second = TestCertificates.issue(dir, "second", "second.relay.test");
        Path cert = dir.resolve("live.crt");
        Path key = dir.resolve("live.key");
        Files.copy(first.certFile(), cert);
        Files.copy(first.keyFile(), key);
        Path log = dir.resolve("relay.log");
        Process relay = relay(List.of(), cert, key, log);
        try {
            int port = RelayLog.awaitPort(log, relay, Duration.ofSeconds(30), "TLS on");
            SSLContext trustBoth = TestCertificates.trusting(first.certificate(), second.certificate());
            assertEquals(first.certificate(), presented(port, trustBoth));

            Files.copy(second.certFile(), cert, StandardCopyOption.REPLACE_EXISTING);
            Files.copy(second.keyFile(), key, StandardCopyOption.REPLACE_EXISTING);
            Process kill = new ProcessBuilder("sh", "-c", "kill -HUP " + relay.pid()).start();
            assertTrue(kill.waitFor(10, TimeUnit.SECONDS), "kill -HUP did not finish");
            assertEquals(0, kill.exitValue());

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!presented(port, trustBoth).equals(second.certificate())) {
                assertTrue(System.nanoTime() < deadline, "no reload after SIGHUP:\n" + Files.readString(log));
                Thread.sleep(50);
            }
            assertTrue(relay.isAlive(), "SIGHUP must not stop the relay when TLS is on");
            assertTrue(Files.readString(log).contains("SIGHUP: reloading the configuration and the TLS certificate"), Files.readString(log));
        } finally {
            relay.destroy();
            relay.waitFor(10, TimeUnit.SECONDS);
            relay.destroyForcibly();
        }
    }
}

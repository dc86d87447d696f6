package dev.crossbar.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.config.NatsConfig;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.testing.NatsCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The files that deploy the relay, checked as far as this machine can run them: the health check
 * script against live relays (serving, degraded, not yet listening), the systemd unit through
 * {@code systemd-analyze verify} with every file it names installed by its own header, and the
 * Dockerfile's instructions (no container engine here: its lint is this test). The Helm chart is
 * linted and rendered by {@code ./test.sh}'s helm step.
 */
class DeploymentFilesIT {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Path HEALTHCHECK = ROOT.resolve("docs/ops/healthcheck.sh");
    private static final Path UNIT = ROOT.resolve("docs/ops/crossbar.service");
    private static final Path DOCKERFILE = ROOT.resolve("docker/Dockerfile");
    /** Bounds each script or tool run; the health check's own tries give up after 5 s. */
    private static final long RUN_SECONDS = 60;

    @TempDir
    Path dir;

    /** What a finished command said, and its exit status. */
    private record Run(int status, String output) {}

    private Run run(Map<String, String> env, String... command) throws IOException, InterruptedException {
        Path out = Files.createTempFile(dir, "run", ".txt");
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(RUN_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " still runs after " + RUN_SECONDS + " s");
        }
        return new Run(p.exitValue(), Files.readString(out));
    }

    private Run healthcheck(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(HEALTHCHECK.toString()));
        command.addAll(List.of(args));
        return run(Map.of(), command.toArray(String[]::new));
    }

    private static ServerConfig.Builder relayOn(int port) {
        return ServerConfig.builder().listen("127.0.0.1:" + port).eventLoops(1).shutdownGrace(Duration.ofSeconds(1));
    }

    @Test
    void theHealthCheckPassesOnAServingRelayOnly() throws Exception {
        int port = NatsCluster.freePort();
        String address = "127.0.0.1:" + port;
        Run refused = healthcheck(address);
        assertEquals(1, refused.status(), refused.output());
        assertTrue(refused.output().contains("connection refused"), refused.output());

        try (CrossbarServer relay = CrossbarServer.start(relayOn(port).build())) {
            Run healthy = healthcheck(address);
            assertEquals(0, healthy.status(), healthy.output());
            assertEquals("healthz: 200 ok", healthy.output().strip());
            // The container's form: the address from the environment.
            Run fromEnv = run(Map.of("HEALTHCHECK_ADDRESS", address), HEALTHCHECK.toString());
            assertEquals(0, fromEnv.status(), fromEnv.output());
        }
        Run stopped = healthcheck(address);
        assertEquals(1, stopped.status(), stopped.output());

        Run malformed = healthcheck(String.valueOf(port));
        assertEquals(2, malformed.status(), malformed.output());
    }

    @Test
    void aDegradedRelayIsUnhealthyButCountsAsStarted() throws Exception {
        int port = NatsCluster.freePort();
        String address = "127.0.0.1:" + port;
        // NATS on a port where nothing listens: the relay starts, relays locally and answers 503.
        NatsConfig nowhere = NatsConfig.builder().servers("nats://127.0.0.1:" + NatsCluster.freePort()).build();
        try (CrossbarServer relay = CrossbarServer.start(relayOn(port).nats(nowhere).build())) {
            Run check = healthcheck(address);
            assertEquals(1, check.status(), check.output());
            assertTrue(check.output().contains("503 degraded: cluster link"), check.output());
            Run started = healthcheck("--ready-within", "10", address);
            assertEquals(0, started.status(), started.output());
        }
    }

    @Test
    void readyWithinWaitsForTheRelayToListenAndGivesUpAtItsBound() throws Exception {
        int port = NatsCluster.freePort();
        String address = "127.0.0.1:" + port;
        long start = System.nanoTime();
        Run never = healthcheck("--ready-within", "2", address);
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertEquals(1, never.status(), never.output());
        assertTrue(tookMillis >= 2_000, "gave up after " + tookMillis + " ms");

        Path out = dir.resolve("waiting.txt");
        Process waiting = new ProcessBuilder(HEALTHCHECK.toString(), "--ready-within", "40", address)
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try {
            Thread.sleep(1_000); // it is polling a closed port by now
            assertTrue(waiting.isAlive(), "returned before the relay listened: " + Files.readString(out));
            try (CrossbarServer relay = CrossbarServer.start(relayOn(port).build())) {
                assertTrue(waiting.waitFor(RUN_SECONDS, TimeUnit.SECONDS), "still waiting: " + Files.readString(out));
                assertEquals(0, waiting.exitValue(), Files.readString(out));
                assertTrue(Files.readString(out).contains("200 ok"), Files.readString(out));
            }
        } finally {
            waiting.destroyForcibly();
        }
    }

    /** The jar and its class-data archive are built, not in the repository. */
    private static boolean built(String installedAs) {
        return installedAs.endsWith(".jar") || installedAs.endsWith(".jsa");
    }

    /** {@code install ... SOURCE DESTINATION} lines of the unit's header, and its archive's: destination to source. */
    private static Map<String, Path> installedByHeader(String unit) {
        Map<String, Path> installed = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?m)^#\\s+install\\s+(?:-[DdmgGo]\\s*(?:\\d+\\s+)?)*(\\S+)\\s+(/\\S+)\\s*$").matcher(unit);
        while (m.find()) {
            installed.put(m.group(2), ROOT.resolve(m.group(1)));
        }
        // The class-data archive is made on the host, by the jar installed there.
        Matcher archive = Pattern.compile("(?m)^#\\s+java -cp (/\\S+) dev\\.crossbar\\.server\\.cli\\.ClassDataArchive (/\\S+) ").matcher(unit);
        while (archive.find()) {
            assertTrue(installed.containsKey(archive.group(1)), "the archive is made by an installed jar: " + archive.group(1));
            installed.put(archive.group(2), ROOT.resolve("crossbar-server/target/crossbar.jsa"));
        }
        return installed;
    }

    @Test
    void theUnitNamesOnlyFilesItsHeaderInstallsAndSystemdAcceptsIt() throws Exception {
        String unit = Files.readString(UNIT);
        Map<String, Path> installed = installedByHeader(unit);
        assertTrue(installed.containsKey("/opt/crossbar/crossbar.jar"), "header installs " + installed.keySet());

        // Every absolute path the unit's own lines name (comments aside): the JVM, or a file the header installs.
        String directives = unit.lines().filter(l -> !l.startsWith("#")).reduce("", (a, b) -> a + b + "\n");
        Matcher paths = Pattern.compile("(?<=[=\\s:])(/(?:opt|usr/local|srv)/[^\\s\"']+)").matcher(directives);
        int named = 0;
        while (paths.find()) {
            named++;
            String path = paths.group(1);
            assertTrue(installed.containsKey(path), "the unit names " + path + ", which its header does not install");
        }
        assertTrue(named >= 3, "jar, health check and documentation: " + named);
        for (Map.Entry<String, Path> e : installed.entrySet()) {
            if (!built(e.getKey())) {
                assertTrue(Files.isRegularFile(e.getValue()), e.getValue() + " (installed as " + e.getKey() + ") is missing");
            }
        }
        assertTrue(Files.isExecutable(HEALTHCHECK), HEALTHCHECK + " is not executable");
        assertTrue(unit.lines().anyMatch(l -> l.equals("Type=exec")), "Type=exec");
        assertTrue(unit.lines().anyMatch(l -> l.startsWith("ExecStartPost=/opt/crossbar/healthcheck.sh --ready-within ")),
                "readiness through the health check");

        // systemd's own check, on a copy whose installed paths point at the repository's files, so
        // a missing or non-executable command fails it; any warning (an unknown key) fails too.
        String copy = unit;
        for (Map.Entry<String, Path> e : installed.entrySet()) {
            if (!built(e.getKey()) && !e.getKey().startsWith("/etc/")) {
                copy = copy.replace(e.getKey(), e.getValue().toString());
            }
        }
        Path unitCopy = dir.resolve("crossbar.service");
        Files.writeString(unitCopy, copy);
        Run verify;
        try {
            verify = run(Map.of(), dev.crossbar.server.testing.Tools.require("systemd-analyze", "systemd"), "verify",
                    unitCopy.toString());
        } catch (IOException e) {
            throw new AssertionError("systemd-analyze is needed (Debian: apt-get install systemd; ./test.sh installs it)", e);
        }
        assertEquals(0, verify.status(), "systemd-analyze verify:\n" + verify.output());
        assertEquals("", verify.output().strip(), "systemd-analyze verify warns");
    }

    /** The Dockerfile's instructions, continuation lines joined and comments dropped. */
    private static List<String> instructions(String dockerfile) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : dockerfile.split("\n")) {
            String l = line.strip();
            if (l.startsWith("#") || (l.isEmpty() && current.length() == 0)) {
                continue;
            }
            if (l.endsWith("\\")) {
                current.append(l, 0, l.length() - 1).append(' ');
            } else {
                out.add(current.append(l).toString());
                current.setLength(0);
            }
        }
        return out;
    }

    @Test
    void theImageRunsAsItsOwnUserWithAHealthCheckAndMemoryFromItsLimit() throws Exception {
        List<String> all = instructions(Files.readString(DOCKERFILE));
        int lastFrom = 0;
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i).startsWith("FROM ")) {
                lastFrom = i;
            }
        }
        List<String> build = all.subList(0, lastFrom);
        List<String> image = all.subList(lastFrom, all.size());
        // The build stage has what the jar needs: its licence file is a resource read from the top directory.
        assertTrue(build.stream().anyMatch(i -> i.matches("COPY .*\\bLICENSE\\b.*")), "the build copies LICENSE");

        String user = image.stream().filter(i -> i.startsWith("USER ")).reduce((a, b) -> b).orElse("USER root");
        String uid = user.substring(5).split(":")[0].strip();
        assertTrue(uid.matches("[1-9]\\d*"), "the image runs as a numeric non-root user: " + user);
        assertTrue(image.stream().anyMatch(i -> i.matches("RUN .*useradd .*--uid " + uid + "\\b.*")), "the user exists: " + uid);

        String healthcheck = image.stream().filter(i -> i.startsWith("HEALTHCHECK ")).findFirst().orElse("");
        assertTrue(healthcheck.contains("CMD [\"/opt/crossbar/healthcheck.sh\""), "HEALTHCHECK runs the script: " + healthcheck);
        assertTrue(healthcheck.contains("--start-period="), "a start period for the JVM's start: " + healthcheck);
        assertTrue(image.contains("COPY docs/ops/healthcheck.sh /opt/crossbar/healthcheck.sh"), "the script is in the image");

        String env = image.stream().filter(i -> i.startsWith("ENV ")).findFirst().orElse("");
        Matcher javaOpts = Pattern.compile("JAVA_OPTS=\"([^\"]*)\"").matcher(env);
        assertTrue(javaOpts.find(), "JAVA_OPTS in " + env);
        List<String> opts = List.of(javaOpts.group(1).split("\\s+"));
        assertTrue(opts.stream().anyMatch(o -> o.startsWith("-XX:MaxRAMPercentage=")), "heap from the limit: " + opts);
        assertTrue(opts.contains("-XX:+ExitOnOutOfMemoryError"), "exits on OutOfMemoryError: " + opts);
        assertFalse(opts.stream().anyMatch(o -> o.startsWith("-Xmx") || o.startsWith("-XX:MaxDirectMemorySize")),
                "no fixed heap or direct memory: " + opts);
        assertTrue(env.contains("HEALTHCHECK_ADDRESS=\"127.0.0.1:8080\"") && env.contains("CROSSBAR_LISTEN=\"0.0.0.0:8080\""),
                "the check asks the port the relay listens on: " + env);
        assertTrue(image.stream().anyMatch(i -> i.startsWith("ENTRYPOINT ") && i.contains("exec java $JAVA_OPTS")),
                "java replaces the shell, so SIGTERM reaches the relay");
    }
}

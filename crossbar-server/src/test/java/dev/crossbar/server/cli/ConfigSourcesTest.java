package dev.crossbar.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.testing.Tokens;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One configuration from three sources: flag > environment > file > default, each error naming its source. */
class ConfigSourcesTest {

    @TempDir
    Path dir;

    private Path file(String yaml) throws Exception {
        Path f = dir.resolve("crossbar.yaml");
        Files.writeString(f, yaml);
        return f;
    }

    private static ServerConfig config(Map<String, String> env, String... args) {
        return ConfigSources.resolve(args, env).command().toConfig();
    }

    @Test
    void aFlagWinsOverTheEnvironmentWhichWinsOverTheFileWhichWinsOverTheDefault() throws Exception {
        Path f = file("max-message: 2MiB\nidle-timeout: 90s\n");
        Map<String, String> env = Map.of("CROSSBAR_MAX_MESSAGE", "3MiB");
        String cfg = "--config=" + f;

        assertEquals(4 << 20, config(env, cfg, "--max-message", "4MiB").maxMessageBytes());
        assertEquals(3 << 20, config(env, cfg).maxMessageBytes());
        assertEquals(2 << 20, config(Map.of(), cfg).maxMessageBytes());
        assertEquals(ServerConfig.DEFAULT_MAX_MESSAGE_BYTES, config(Map.of()).maxMessageBytes());
        assertEquals(Duration.ofSeconds(90), config(env, cfg).idleTimeout(), "the file's other keys still apply");

        Map<String, ConfigSources.Origin> origins = ConfigSources.resolve(new String[] {cfg}, env).origins();
        assertEquals(ConfigSources.Kind.ENVIRONMENT, origins.get("--max-message").kind());
        assertEquals("CROSSBAR_MAX_MESSAGE", origins.get("--max-message").where());
        assertEquals(ConfigSources.Kind.FILE, origins.get("--idle-timeout").kind());
        assertEquals(f + ":2", origins.get("--idle-timeout").where());
        assertEquals(ConfigSources.Kind.DEFAULT, origins.get("--listen").kind());
    }

    @Test
    void theFileCanBeNamedInTheEnvironmentAndHoldsRoutesAndKeys() throws Exception {
        Path f = file("""
                # a lab's relay
                listen: 127.0.0.1:0
                route:
                  - "/cam/**:start=keyframe"
                  - "/data/**:start=last"
                auth-secret: "%s"
                auth-audience: wss://relay.example.org
                stats-require-admin: true
                """.formatted(Tokens.SECRET));
        ServerConfig c = config(Map.of("CROSSBAR_CONFIG", f.toString()));
        assertEquals(2, c.routing().rules().size());
        assertTrue(c.auth().enabled());
        assertFalse(c.auth().adminPaths().isEmpty(), "a boolean key set to true turns its option on");
    }

    @Test
    void anUnknownKeyStopsTheRelayNamingFileLineAndKey() throws Exception {
        Path f = file("listen: 127.0.0.1:0\nmax-mesage: 1MiB\n");
        ConfigException e = assertThrows(ConfigException.class, () -> config(Map.of(), "--config", f.toString()));
        assertTrue(e.getMessage().startsWith(f + ":2: max-mesage: unknown key"), e.getMessage());
        assertTrue(e.getMessage().contains("did you mean max-message?"), e.getMessage());
    }

    @Test
    void aBadValueNamesItsSource() throws Exception {
        Path f = file("max-message: lots\n");
        ConfigException e = assertThrows(ConfigException.class, () -> config(Map.of(), "--config", f.toString()));
        assertTrue(e.getMessage().startsWith(f + ":1: max-message: "), e.getMessage());
        assertTrue(e.getMessage().contains("'lots'"), e.getMessage());

        e = assertThrows(ConfigException.class, () -> config(Map.of("CROSSBAR_PING_INTERVAL", "soon")));
        assertTrue(e.getMessage().startsWith("CROSSBAR_PING_INTERVAL: ping-interval: "), e.getMessage());

        Path list = file("listen:\n  - a\n  - b\n");
        e = assertThrows(ConfigException.class, () -> config(Map.of(), "--config", list.toString()));
        assertEquals(list + ":1: listen: one value expected, not a list", e.getMessage());

        Path bool = file("trust-forwarded-for: sometimes\n");
        e = assertThrows(ConfigException.class, () -> config(Map.of(), "--config", bool.toString()));
        assertTrue(e.getMessage().contains("(expected: true or false)"), e.getMessage());

        Path missing = dir.resolve("nowhere.yaml");
        e = assertThrows(ConfigException.class, () -> config(Map.of(), "--config", missing.toString()));
        assertEquals(missing + ": no such file", e.getMessage());
    }

    @Test
    void aValueTheConfigurationRefusesNamesItsSourceInOneLine() throws Exception {
        Path f = file("slow-consumer: sometimes\n");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(Map.of(), System.out, new PrintStream(err, true), "--config", f.toString());
        assertEquals(2, code);
        String printed = err.toString().strip();
        assertEquals(1, printed.lines().count(), printed);
        assertTrue(printed.startsWith("crossbar: " + f + ":1: --slow-consumer: 'sometimes'"), printed);
    }

    @Test
    void printConfigShowsEveryValueWithItsSourceRedactsSecretsAndReadsBack() throws Exception {
        Path f = file("max-message: 2MiB\nroute:\n  - \"/cam/**:start=keyframe\"\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Map<String, String> env = Map.of("CROSSBAR_AUTH_SECRET", Tokens.SECRET, "CROSSBAR_AUTH_AUDIENCE", "wss://x");
        assertEquals(0, Main.run(env, new PrintStream(out, true), System.err,
                "--config", f.toString(), "--idle-timeout", "90s", "--print-config"));
        String printed = out.toString();
        assertTrue(printed.contains("max-message: \"2MiB\"  # file " + f + ":1"), printed);
        assertTrue(printed.contains("idle-timeout: \"90s\"  # flag"), printed);
        assertTrue(printed.contains("listen: \"" + ServerConfig.DEFAULT_LISTEN + "\"  # default"), printed);
        assertTrue(printed.contains("auth-secret: \"<redacted>\"  # environment CROSSBAR_AUTH_SECRET"), printed);
        assertFalse(printed.contains(Tokens.SECRET), "a secret is never printed");
        assertTrue(printed.contains("  - \"/cam/**:start=keyframe\""), printed);
        assertTrue(printed.contains("# nats: (not set)"), printed);

        // What it prints is a configuration file: read back, it gives the same configuration.
        Path again = dir.resolve("printed.yaml");
        Files.writeString(again, printed.replace("\"<redacted>\"", "\"" + Tokens.SECRET + "\""));
        ServerConfig a = config(env, "--config", f.toString(), "--idle-timeout", "90s");
        ServerConfig b = config(Map.of(), "--config", again.toString());
        assertEquals(a.maxMessageBytes(), b.maxMessageBytes());
        assertEquals(a.idleTimeout(), b.idleTimeout());
        assertEquals(a.routing().rules().get(0).describe(), b.routing().rules().get(0).describe());
        assertEquals(a.auth().audience(), b.auth().audience());
        assertEquals(a.eventLoops(), b.eventLoops());
    }

    @Test
    void routesInTheEnvironmentAreOnePerLine() {
        ServerConfig c = config(Map.of("CROSSBAR_ROUTE", "/cam/**:start=keyframe,max-latency=500ms\n/data/**:start=last\n"));
        assertEquals(List.of("/cam/**", "/data/**"), c.routing().rules().stream().map(r -> r.pattern().toString()).toList());
    }

    @Test
    void everyDefaultComesFromTheConfigurationsConstants() {
        ServerConfig parsed = config(Map.of());
        ServerConfig built = ServerConfig.builder().build();
        assertEquals(built.listen(), parsed.listen());
        assertEquals(built.maxMessageBytes(), parsed.maxMessageBytes());
        assertEquals(built.eventLoops(), parsed.eventLoops());
        assertEquals(built.handshakeTimeout(), parsed.handshakeTimeout());
        assertEquals(built.maxClientQueueBytes(), parsed.maxClientQueueBytes());
        assertEquals(built.maxLoopBacklogBytes(), parsed.maxLoopBacklogBytes());
        assertEquals(built.statsClusterMaxReplyBytes(), parsed.statsClusterMaxReplyBytes());
        assertEquals(built.replayLimits(), parsed.replayLimits());
        assertEquals(built.sessions(), parsed.sessions());
        assertEquals(built.latencySendBuffer(), parsed.latencySendBuffer());
        assertEquals(built.backpressureTimeout(), parsed.backpressureTimeout());
    }
}

package dev.crossbar.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.config.AuthConfig;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.config.TlsConfig;
import dev.crossbar.server.config.TlsProvider;
import dev.crossbar.server.testing.Tokens;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The access-control and TLS flags: mapping, environment, clear errors, and no secret ever shown. */
class AuthTlsFlagsTest {

    @TempDir
    Path dir;

    private static CrossbarCommand parse(Map<String, String> env, String... args) {
        CrossbarCommand cmd = ConfigSources.resolve(args, env).command();
        return cmd;
    }

    private static CrossbarCommand parse(String... args) {
        return parse(Map.of(), args);
    }

    @Test
    void offByDefault() {
        ServerConfig c = parse().toConfig();
        assertFalse(c.auth().enabled());
        assertFalse(c.tls().enabled());
        assertEquals(AuthConfig.DEFAULT_CLOCK_SKEW, AuthConfig.builder().build().clockSkew());
    }

    @Test
    void secretAudienceAndOptionsMapOntoTheConfig() {
        AuthConfig a = parse("--auth-secret", Tokens.SECRET, "--auth-audience", "wss://relay.test/",
                "--auth-clock-skew", "5s", "--auth-first-message", "--stats-require-admin",
                "--auth-max-revocations", "50", "--auth-revocation-ttl", "2h").toConfig().auth();
        assertTrue(a.enabled());
        assertEquals("wss://relay.test", a.audience());
        assertEquals(Duration.ofSeconds(5), a.clockSkew());
        assertTrue(a.firstMessage());
        assertEquals(AuthConfig.STATS_PATHS, a.adminPaths());
        assertEquals(50, a.maxRevocations());
        assertEquals(Duration.ofHours(2), a.revocationTtl());
        assertFalse(a.toString().contains(Tokens.SECRET), a.toString());
        assertEquals(AuthConfig.DEFAULT_CLOCK_SKEW, parse("--auth-secret", Tokens.SECRET, "--auth-audience", "x")
                .toConfig().auth().clockSkew());
    }

    @Test
    void theSecretAndAudienceCanComeFromTheEnvironmentOrAFile() throws Exception {
        assertTrue(parse(Map.of("CROSSBAR_AUTH_SECRET", Tokens.SECRET, "CROSSBAR_AUTH_AUDIENCE", "wss://a"))
                .toConfig().auth().enabled());
        // The original crossbar's variable names.
        AuthConfig original = parse(Map.of("CROSSBAR_SECRET", Tokens.SECRET, "CROSSBAR_AUDIENCE", "https://b")).toConfig().auth();
        assertEquals("https://b", original.audience());
        Path file = dir.resolve("secret");
        Files.writeString(file, Tokens.SECRET + "\n");
        assertTrue(parse("--auth-secret-file", file.toString(), "--auth-audience", "wss://c").toConfig().auth().enabled());
    }

    @Test
    void badCombinationsNameTheProblem() throws Exception {
        Path file = dir.resolve("secret");
        Files.writeString(file, Tokens.SECRET);
        IllegalArgumentException two = assertThrows(IllegalArgumentException.class, () -> parse("--auth-secret", Tokens.SECRET,
                "--auth-secret-file", file.toString(), "--auth-audience", "x").toConfig());
        assertEquals("--auth-secret, --auth-secret-file: more than one key given (expected: one)", two.getMessage());
        IllegalArgumentException weak = assertThrows(IllegalArgumentException.class,
                () -> parse("--auth-secret", "short", "--auth-audience", "x").toConfig());
        assertEquals("auth secret: 5 bytes (expected: at least 32 bytes, 256 bits, as HS256 requires)", weak.getMessage());
        IllegalArgumentException noAudience = assertThrows(IllegalArgumentException.class,
                () -> parse("--auth-secret", Tokens.SECRET).toConfig());
        assertTrue(noAudience.getMessage().startsWith("audience: missing"), noAudience.getMessage());
        IllegalArgumentException noKey = assertThrows(IllegalArgumentException.class,
                () -> parse("--stats-require-admin").toConfig());
        assertTrue(noKey.getMessage().startsWith("auth: no key configured"), noKey.getMessage());
        IllegalArgumentException audienceOnly = assertThrows(IllegalArgumentException.class,
                () -> parse("--auth-audience", "wss://relay.test").toConfig());
        assertTrue(audienceOnly.getMessage().startsWith("auth: no key configured"), audienceOnly.getMessage());
        assertFalse(parse(Map.of("CROSSBAR_AUDIENCE", "https://old")).toConfig().auth().enabled(),
                "an audience left in the environment alone does not turn access control on");
        IllegalArgumentException certOnly = assertThrows(IllegalArgumentException.class,
                () -> parse("--tls-cert", "a.pem").toConfig());
        assertEquals("--tls-cert given alone (expected: both --tls-cert and --tls-key)", certOnly.getMessage());
        IllegalArgumentException provider = assertThrows(IllegalArgumentException.class,
                () -> parse("--tls-cert", "a.pem", "--tls-key", "k.pem", "--tls-provider", "gnutls").toConfig());
        assertEquals("--tls-provider: 'gnutls' (expected: auto, openssl or jdk)", provider.getMessage());
    }

    @Test
    void tlsFlags() {
        TlsConfig t = parse("--tls-cert", "a.pem", "--tls-key", "k.pem", "--tls-provider", "jdk",
                "--tls-reload-interval", "1m").toConfig().tls();
        assertTrue(t.enabled());
        assertEquals(Path.of("a.pem"), t.certificate());
        assertEquals(TlsProvider.JDK, t.provider());
        assertEquals(Duration.ofMinutes(1), t.reloadInterval());
        assertEquals(TlsConfig.DEFAULT_RELOAD_INTERVAL,
                parse("--tls-cert", "a.pem", "--tls-key", "k.pem").toConfig().tls().reloadInterval());
    }

    @Test
    void helpNeverShowsTheSecretAndAShortSecretIsOneLine() {
        CrossbarCommand cmd = new CrossbarCommand();
        cmd.env = Map.of("CROSSBAR_AUTH_SECRET", Tokens.SECRET);
        StringWriter out = new StringWriter();
        new CommandLine(cmd).usage(new PrintWriter(out, true));
        assertTrue(out.toString().contains("--auth-secret=SECRET"), out.toString());
        assertFalse(out.toString().contains(Tokens.SECRET));

        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        assertEquals(2, Main.run(Map.of(), System.out, new java.io.PrintStream(captured, true),
                "--listen", "127.0.0.1:0", "--auth-secret", "not-long-enough", "--auth-audience", "x"));
        String printed = captured.toString();
        assertEquals(1, printed.strip().lines().count(), printed);
        assertFalse(printed.contains("not-long-enough"), printed);
        assertTrue(printed.startsWith("crossbar: auth secret: 15 bytes"), printed);
    }
}

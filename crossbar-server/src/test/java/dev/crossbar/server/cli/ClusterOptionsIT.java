package dev.crossbar.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.config.NatsConfig;
import dev.crossbar.server.config.ServerConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The cluster flags: off by default, mapped onto {@link NatsConfig}, secrets never shown. */
class ClusterOptionsIT {

    private static CrossbarCommand parse(String... args) {
        CrossbarCommand cmd = ConfigSources.resolve(args, Map.of()).command();
        return cmd;
    }

    @Test
    void withoutNatsTheNodeRunsAloneUnderItsHostName() {
        ServerConfig c = parse().toConfig();
        assertNull(c.nats());
        assertEquals(ServerConfig.defaultNodeName(), c.nodeName());
        assertFalse(c.nodeName().isBlank());
    }

    @Test
    void flagsMapOntoTheNatsConfig(@TempDir Path dir) throws Exception {
        Path creds = Files.writeString(dir.resolve("node.creds"), "-----BEGIN NATS USER JWT-----\n");
        ServerConfig c = parse("--nats", "nats://10.0.0.5:4222, nats://10.0.0.6:4222", "--node-name", "lab-eu-1",
                "--nats-creds", creds.toString(), "--nats-max-pending", "8MiB", "--nats-tls").toConfig();
        NatsConfig n = c.nats();
        assertEquals(List.of("nats://10.0.0.5:4222", "nats://10.0.0.6:4222"), n.servers());
        assertEquals("lab-eu-1", c.nodeName());
        assertEquals(creds, n.credsFile());
        assertEquals(8L * 1024 * 1024, n.maxPendingBytes());
        assertTrue(n.tls());
        assertEquals(NatsConfig.DEFAULT_MAX_PENDING_BYTES, parse("--nats", "nats://h:4222").toConfig().nats().maxPendingBytes());
        assertEquals(NatsConfig.DEFAULT_LOSSLESS_TIMEOUT, parse("--nats", "nats://h:4222").toConfig().nats().losslessTimeout());
        assertEquals(java.time.Duration.ofSeconds(45),
                parse("--nats", "nats://h:4222", "--nats-lossless-timeout", "45s").toConfig().nats().losslessTimeout());
    }

    @Test
    void secretsAreNeverShown() {
        NatsConfig n = parse("--nats", "nats://alice:s3cret@h:4222", "--nats-user", "bob", "--nats-password", "hunter2")
                .toConfig().nats();
        assertEquals("hunter2", n.password());
        String shown = n.toString();
        assertFalse(shown.contains("hunter2"), shown);
        assertFalse(shown.contains("s3cret"), shown);
        assertTrue(shown.contains("nats://***@h:4222"), shown);
        String token = parse("--nats", "nats://h:4222", "--nats-token", "t0ken").toConfig().nats().toString();
        assertFalse(token.contains("t0ken"), token);
        StringWriter help = new StringWriter();
        new CommandLine(new CrossbarCommand()).usage(new PrintWriter(help));
        assertTrue(help.toString().contains("--nats-password"));
        assertTrue(help.toString().contains("--node-name"));
    }

    @Test
    void invalidCombinationsNameTheFlag(@TempDir Path dir) {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> parse("--nats-token", "x").toConfig())
                .getMessage().contains("without --nats"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> parse("--nats", "nats://h:1", "--nats-user", "u").toConfig()).getMessage().startsWith("natsUser/natsPassword"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> parse("--nats", "nats://h:1", "--nats-token", "t", "--nats-user", "u", "--nats-password", "p")
                        .toConfig()).getMessage().contains("more than one"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> parse("--nats", "nats://h:1", "--nats-creds", dir.resolve("missing").toString()).toConfig())
                .getMessage().startsWith("natsCreds: "));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> parse("--nats", "nats://h:1", "--node-name", " ").toConfig()).getMessage().startsWith("nodeName: "));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> parse("--nats", "nats://h:1", "--nats-max-pending", "0").toConfig()).getMessage()
                .startsWith("natsMaxPendingBytes: 0"));
        // Shorter than a hung server takes to be noticed, it would give up what moving server saves.
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> parse("--nats", "nats://h:1", "--nats-lossless-timeout", "20s").toConfig()).getMessage()
                .startsWith("natsLosslessTimeout: PT20S (expected: > 3 x natsPingInterval = PT30S"));
    }

    @Test
    void aCaFileWithoutCertificatesRefusesToStartWithOneLine(@TempDir Path dir) throws Exception {
        Path ca = Files.writeString(dir.resolve("ca.pem"), "not a certificate\n");
        ServerConfig c = parse("--listen", "127.0.0.1:0", "--nats", "nats://127.0.0.1:1", "--nats-tls-ca", ca.toString())
                .toConfig();
        CrossbarServer.StartException e = assertThrows(CrossbarServer.StartException.class, () -> CrossbarServer.start(c));
        assertTrue(e.getMessage().startsWith("natsTlsCa: " + ca), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }
}

package dev.crossbar.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.config.ServerConfig;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The statistics flags: defaults are the documented constants, bad values name themselves. */
class StatsFlagsTest {

    private static ServerConfig parse(String... args) {
        CrossbarCommand cmd = ConfigSources.resolve(args, Map.of()).command();
        return cmd.toConfig();
    }

    @Test
    void defaults() {
        ServerConfig c = parse("--listen", "127.0.0.1:8080");
        assertEquals(ServerConfig.DEFAULT_STATS_INTERVAL, c.statsInterval());
        assertEquals(Duration.ofSeconds(5), c.statsInterval());
        assertEquals(ServerConfig.DEFAULT_TRUST_FORWARDED_FOR, c.trustForwardedFor());
        assertFalse(c.trustForwardedFor());
        assertNull(c.adminListen());
        assertEquals(ServerConfig.defaults().statsInterval(), c.statsInterval());
        assertEquals(ServerConfig.DEFAULT_STATS_FULL_CLIENT_DETAILS, c.statsFullClientDetails());
        assertFalse(c.statsFullClientDetails(), "client details truncated by default");
        assertEquals(ServerConfig.DEFAULT_STATS_CLUSTER_TIMEOUT, c.statsClusterTimeout());
        assertEquals(ServerConfig.defaults().statsClusterTimeout(), c.statsClusterTimeout());
        assertEquals(ServerConfig.DEFAULT_STATS_CLUSTER_MAX_REPLY_BYTES, c.statsClusterMaxReplyBytes());
        assertEquals(ServerConfig.defaults().statsClusterMaxReplyBytes(), c.statsClusterMaxReplyBytes());
    }

    @Test
    void flags() {
        ServerConfig c = parse("--listen", "127.0.0.1:8080", "--stats-interval", "2s", "--trust-forwarded-for",
                "--admin-listen", "127.0.0.1:9090");
        assertEquals(Duration.ofSeconds(2), c.statsInterval());
        assertTrue(c.trustForwardedFor());
        assertEquals(9090, c.adminListen().getPort());
        assertEquals("127.0.0.1", c.adminListen().getHostString());
        ServerConfig cluster = parse("--stats-full-client-details", "--stats-cluster-timeout", "500ms",
                "--stats-cluster-max-reply", "64KiB");
        assertTrue(cluster.statsFullClientDetails());
        assertEquals(Duration.ofMillis(500), cluster.statsClusterTimeout());
        assertEquals(64 * 1024, cluster.statsClusterMaxReplyBytes());
    }

    @Test
    void badValuesNameTheValueAndTheExpectation() {
        IllegalArgumentException tooShort = assertThrows(IllegalArgumentException.class,
                () -> parse("--stats-interval", "50ms"));
        assertEquals("statsInterval: PT0.05S (expected: >= PT0.1S)", tooShort.getMessage());
        IllegalArgumentException badAdmin = assertThrows(IllegalArgumentException.class,
                () -> parse("--admin-listen", "nowhere"));
        assertTrue(badAdmin.getMessage().startsWith("adminListen: 'nowhere' (expected: host:port"), badAdmin.getMessage());
        IllegalArgumentException same = assertThrows(IllegalArgumentException.class,
                () -> parse("--listen", "127.0.0.1:8080", "--admin-listen", "127.0.0.1:8080"));
        assertEquals("adminListen: 127.0.0.1:8080 (expected: an address other than listen)", same.getMessage());
        assertEquals(2, Main.run("--stats-interval", "1ms"), "a bad flag exits 2 with one line");
        IllegalArgumentException noWait = assertThrows(IllegalArgumentException.class,
                () -> parse("--stats-cluster-timeout", "0s"));
        assertEquals("statsClusterTimeout: PT0S (expected: > 0)", noWait.getMessage());
        IllegalArgumentException tinyReply = assertThrows(IllegalArgumentException.class,
                () -> parse("--stats-cluster-max-reply", "1KiB"));
        assertEquals("statsClusterMaxReplyBytes: 1024 (expected: >= 4096)", tinyReply.getMessage());
    }
}

package dev.crossbar.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.config.SessionConfig;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code --session-open-timeout} and {@code --max-pending-sessions}: defaults, values and refusals. */
class SessionFlagsTest {

    private static ServerConfig config(String... args) {
        CrossbarCommand cmd = ConfigSources.resolve(args, Map.of()).command();
        return cmd.toConfig();
    }

    @Test
    void defaultsAreTheConfigsConstants() {
        assertEquals(SessionConfig.DEFAULT, config().sessions());
    }

    @Test
    void valuesAreTaken() {
        SessionConfig c = config("--session-open-timeout", "2s", "--max-pending-sessions", "7",
                "--route", "/shell/*:schema=session").sessions();
        assertEquals(new SessionConfig(Duration.ofSeconds(2), 7), c);
    }

    @Test
    void badValuesAreRefusedNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> config("--max-pending-sessions", "0"));
        assertEquals("maxPendingSessions: 0 (expected: > 0)", e.getMessage());
        IllegalArgumentException url = assertThrows(IllegalArgumentException.class,
                () -> config("--session-url", "http://node-a:8080"));
        assertEquals("sessionUrl: 'http://node-a:8080' (expected: ws://HOST[:PORT] or wss://HOST[:PORT])", url.getMessage());
    }

    @Test
    void theSessionUrlLosesATrailingSlash() {
        assertEquals("wss://node-a.example.org", config("--session-url", "wss://node-a.example.org/").sessions().url());
    }
}

package dev.crossbar.server;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static dev.crossbar.server.testing.StatsReader.clientByAgent;
import static dev.crossbar.server.testing.StatsReader.nextWhere;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.testing.JdkClient;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code --trust-forwarded-for}: the proxy's view of the client's address, only when trusted. */
class ForwardedForIT {

    private static final Map<String, String> HEADERS = Map.of("User-Agent", "behind-proxy",
            "X-Forwarded-For", "6.6.6.6, 10.1.2.3");

    private static JsonNode seenAs(boolean trust) {
        ServerConfig config = ServerConfig.builder().listen("127.0.0.1:0").eventLoops(1)
                .shutdownGrace(Duration.ofSeconds(1)).trustForwardedFor(trust)
                .statsFullClientDetails(true).build(); // whole addresses: what this test compares
        try (CrossbarServer server = CrossbarServer.start(config);
             JdkClient c = JdkClient.connectWithHeaders(URI.create("ws://127.0.0.1:" + server.port() + "/lab/p"), HEADERS);
             JdkClient stats = JdkClient.connect(URI.create("ws://127.0.0.1:" + server.port() + "/ws"))) {
            await("joined", Duration.ofSeconds(5), () -> server.topics().size() == 1);
            stats.sendText("-");
            JsonNode s = nextWhere(stats, Duration.ofSeconds(5), snap -> snap.get("clients").size() == 1);
            return clientByAgent(s, "behind-proxy");
        }
    }

    @Test
    void trustedProxyLastHopIsTheClientAddress() {
        // The last entry is the one the trusted proxy appended; earlier ones are the client's claim.
        assertEquals("10.1.2.3", seenAs(true).get("remoteAddr").asText());
    }

    @Test
    void untrustedHeaderIsIgnored() {
        String addr = seenAs(false).get("remoteAddr").asText();
        assertTrue(addr.startsWith("127.0.0.1:"), addr);
    }
}

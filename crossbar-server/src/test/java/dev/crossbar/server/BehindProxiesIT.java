package dev.crossbar.server;

import static dev.crossbar.server.testing.StatsReader.nextWhere;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.config.TrustedProxies;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.ProxyProcess;
import dev.crossbar.server.testing.RawClient;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The relay behind the front proxies a campus runs, both real and started here: HAProxy with the
 * PROXY protocol v2 ({@code send-proxy-v2}) and nginx with {@code X-Forwarded-For}. Clients connect
 * from their own loopback addresses (127.0.0.2, 127.0.0.3); the relay must see those, not the
 * proxy's, in its statistics and for its per-address limit, and relay their messages as usual.
 */
class BehindProxiesIT {

    @TempDir
    Path dir;

    private static CrossbarServer start(UnaryOperator<ServerConfig.Builder> configure) {
        return CrossbarServer.start(configure.apply(ServerConfig.builder().listen("127.0.0.1:0").eventLoops(1)
                .shutdownGrace(Duration.ofSeconds(1)).statsFullClientDetails(true).adminListen("127.0.0.1:0")
                .trustedProxies(TrustedProxies.parse(List.of("127.0.0.1"))).maxConnectionsPerAddress(1)).build());
    }

    /** The addresses the relay's statistics show for its clients, read on the admin address. */
    private static List<String> seen(CrossbarServer server, int clients) {
        try (JdkClient stats = JdkClient.connect(URI.create("ws://127.0.0.1:" + server.adminAddress().getPort() + "/ws"))) {
            stats.sendText("-");
            JsonNode s = nextWhere(stats, Duration.ofSeconds(10), snap -> snap.get("clients").size() == clients);
            List<String> out = new ArrayList<>();
            s.get("clients").forEach(c -> out.add(c.get("remoteAddr").asText()));
            return out;
        }
    }

    /** Two clients from two addresses through the proxy, talking; a second connection from the first address refused. */
    private static void checkThrough(CrossbarServer relay, int proxyPort) throws Exception {
        try (RawClient a = new RawClient("127.0.0.2", proxyPort);
             RawClient b = new RawClient("127.0.0.3", proxyPort)) {
            // A claim of its own is never believed: the proxy's view of the client wins.
            String first = a.upgrade("/lab/p3/chat", "X-Forwarded-For: 6.6.6.6");
            assertTrue(first.startsWith("HTTP/1.1 101"), first);
            String second = b.upgrade("/lab/p3/chat");
            assertTrue(second.startsWith("HTTP/1.1 101"), second);
            List<String> addresses = seen(relay, 2);
            assertTrue(addresses.stream().anyMatch(x -> x.startsWith("127.0.0.2:")), addresses.toString());
            assertTrue(addresses.stream().anyMatch(x -> x.startsWith("127.0.0.3:")), addresses.toString());
            a.send(RawClient.frame(0x81, "through the proxy".getBytes(java.nio.charset.StandardCharsets.UTF_8), true));
            RawClient.Frame got = b.readFrame(10_000);
            assertEquals("through the proxy", new String(got.payload(), java.nio.charset.StandardCharsets.UTF_8));
            // --max-connections-per-address 1 counts 127.0.0.2, not the proxy that carries all three.
            // Connected only now: behind the PROXY protocol a connection is counted when the proxy
            // connects, before any request, so one opened beside a could have been counted first.
            try (RawClient again = new RawClient("127.0.0.2", proxyPort)) {
                String refused = again.upgrade("/lab/p3/chat");
                assertTrue(refused.startsWith("HTTP/1.1 429"), refused);
            }
        }
    }

    @Test
    void haproxyWithProxyProtocolV2() throws Exception {
        try (CrossbarServer relay = start(b -> b.proxyProtocol(true));
             ProxyProcess haproxy = ProxyProcess.haproxy(dir, relay.port())) {
            checkThrough(relay, haproxy.port());
        }
    }

    @Test
    void nginxWithXForwardedFor() throws Exception {
        try (CrossbarServer relay = start(b -> b);
             ProxyProcess nginx = ProxyProcess.nginx(dir, relay.port())) {
            checkThrough(relay, nginx.port());
        }
    }
}

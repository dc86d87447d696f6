package dev.crossbar.server;

import static dev.crossbar.server.testing.StatsReader.clientByAgent;
import static dev.crossbar.server.testing.StatsReader.nextWhere;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.config.TrustedProxies;
import dev.crossbar.server.http.HandshakeFailures;
import dev.crossbar.server.testing.IngestPoster;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.RawClient;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * {@code --trusted-proxies} and {@code --proxy-protocol}: the address a trusted proxy reports is the
 * client's for statistics and for the per-address limits; anyone else's word is ignored.
 */
class RealAddressIT {

    private static CrossbarServer start(UnaryOperator<ServerConfig.Builder> configure) {
        return CrossbarServer.start(configure.apply(ServerConfig.builder().listen("127.0.0.1:0").eventLoops(1)
                .shutdownGrace(Duration.ofSeconds(1)).statsFullClientDetails(true)).build());
    }

    /** The address the relay's statistics show for the client whose user agent is {@code agent}. */
    private static String seenAddress(CrossbarServer server, String agent) {
        int port = server.adminAddress() != null ? server.adminAddress().getPort() : server.port();
        try (JdkClient stats = JdkClient.connect(URI.create("ws://127.0.0.1:" + port + "/ws"))) {
            stats.sendText("-");
            JsonNode s = nextWhere(stats, Duration.ofSeconds(5), snap -> {
                for (JsonNode c : snap.get("clients")) {
                    if (agent.equals(c.path("userAgent").asText())) {
                        return true;
                    }
                }
                return false;
            });
            return clientByAgent(s, agent).get("remoteAddr").asText();
        }
    }

    @Test
    void forwardedForFromATrustedProxyNamesTheClient() throws Exception {
        try (CrossbarServer server = start(b -> b.trustedProxies(TrustedProxies.parse(List.of("127.0.0.1"))));
             RawClient c = new RawClient(server.port())) {
            String head = c.upgrade("/lab/p", "User-Agent: behind-proxy", "X-Forwarded-For: 6.6.6.6, 198.51.100.7");
            assertTrue(head.startsWith("HTTP/1.1 101"), head);
            assertEquals("198.51.100.7:0", seenAddress(server, "behind-proxy"));
        }
    }

    @Test
    void anHttpPosterBehindATrustedProxyIsNamedByItsForwardedFor() throws Exception {
        try (CrossbarServer server = start(b -> b.trustedProxies(TrustedProxies.parse(List.of("127.0.0.1"))));
             IngestPoster poster = IngestPoster.open(server.port(), "POST", "/in/cam", -1,
                     Map.of("User-Agent", "ffmpeg-behind-proxy", "X-Forwarded-For", "198.51.100.8"))) {
            byte[] piece = "ts".getBytes(StandardCharsets.US_ASCII);
            poster.write(piece, 0, piece.length);
            assertEquals("198.51.100.8:0", seenAddress(server, "ffmpeg-behind-proxy"));
        }
    }

    @Test
    void forwardedForFromAnyoneElseIsIgnored() throws Exception {
        try (CrossbarServer server = start(b -> b.trustedProxies(TrustedProxies.parse(List.of("10.0.0.0/8"))));
             RawClient c = new RawClient(server.port())) {
            assertTrue(c.upgrade("/lab/p", "User-Agent: claims", "X-Forwarded-For: 198.51.100.7").startsWith("HTTP/1.1 101"));
            assertTrue(seenAddress(server, "claims").startsWith("127.0.0.1:"));
        }
    }

    @Test
    void proxyProtocolV1AndV2HeadersNameTheClient() throws Exception {
        // Statistics on an address of their own: every connection to the main one needs a PROXY header.
        try (CrossbarServer server = start(b -> b.trustedProxies(TrustedProxies.parse(List.of("127.0.0.0/8")))
                .proxyProtocol(true).adminListen("127.0.0.1:0"));
             RawClient v1 = new RawClient(server.port());
             RawClient v2 = new RawClient(server.port())) {
            v1.send("PROXY TCP4 198.51.100.7 127.0.0.1 5555 8080\r\n".getBytes(StandardCharsets.US_ASCII));
            assertTrue(v1.upgrade("/lab/p", "User-Agent: v1").startsWith("HTTP/1.1 101"));
            v2.send(proxyV2(new byte[] {(byte) 203, 0, 113, 9}, 6000));
            assertTrue(v2.upgrade("/lab/p", "User-Agent: v2").startsWith("HTTP/1.1 101"));
            assertEquals("198.51.100.7:5555", seenAddress(server, "v1"));
            assertEquals("203.0.113.9:6000", seenAddress(server, "v2"));
        }
    }

    @Test
    void proxyProtocolFromAnUntrustedPeerOrWithoutAHeaderIsClosed() throws Exception {
        try (CrossbarServer server = start(b -> b.trustedProxies(TrustedProxies.parse(List.of("127.0.0.1")))
                .proxyProtocol(true));
             RawClient stranger = new RawClient("127.0.0.2", server.port());
             RawClient noHeader = new RawClient(server.port())) {
            stranger.send("PROXY TCP4 198.51.100.7 127.0.0.1 5555 8080\r\n".getBytes(StandardCharsets.US_ASCII));
            assertTrue(stranger.closedByPeer(10_000), "a PROXY header from an untrusted peer was taken");
            noHeader.send(("GET /lab/p HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            assertTrue(noHeader.closedByPeer(10_000), "a connection without a PROXY header was served");
        }
    }

    @Test
    void perAddressLimitsCountTheRealAddress() throws Exception {
        try (CrossbarServer server = start(b -> b.trustedProxies(TrustedProxies.parse(List.of("127.0.0.1")))
                .maxConnectionsPerAddress(1));
             RawClient a = new RawClient(server.port());
             RawClient b = new RawClient(server.port());
             RawClient a2 = new RawClient(server.port())) {
            // Three connections from one proxy: two clients are two addresses, each within its limit of one.
            assertTrue(a.upgrade("/lab/p", "X-Forwarded-For: 198.51.100.1").startsWith("HTTP/1.1 101"));
            assertTrue(b.upgrade("/lab/p", "X-Forwarded-For: 198.51.100.2").startsWith("HTTP/1.1 101"));
            String refused = a2.upgrade("/lab/p", "X-Forwarded-For: 198.51.100.1");
            assertTrue(refused.startsWith("HTTP/1.1 429"), refused);
            assertEquals(1, server.handshakeFailures().count(HandshakeFailures.Reason.TOO_MANY_FROM_ADDRESS));
        }
    }

    @Test
    void newConnectionRatePerAddressRefusesAFloodAndNoOneElse() throws Exception {
        try (CrossbarServer server = start(b -> b.maxConnectionRatePerAddress(5))) {
            int upgraded = 0;
            int limited = 0;
            List<RawClient> open = new ArrayList<>();
            try {
                for (int i = 0; i < 20; i++) {
                    RawClient c = new RawClient("127.0.0.2", server.port());
                    open.add(c);
                    String head = c.upgrade("/lab/flood");
                    if (head.startsWith("HTTP/1.1 101")) {
                        upgraded++;
                    } else {
                        assertTrue(head.startsWith("HTTP/1.1 429"), head);
                        limited++;
                    }
                }
                // A bucket of five, refilling at five a second: the loop is far quicker than 3 s.
                assertTrue(upgraded >= 5 && upgraded < 20, "upgraded " + upgraded);
                assertEquals(20 - upgraded, limited);
                assertEquals(limited, server.handshakeFailures().count(HandshakeFailures.Reason.CONNECTION_RATE));
                try (RawClient other = new RawClient("127.0.0.3", server.port())) {
                    assertTrue(other.upgrade("/lab/flood").startsWith("HTTP/1.1 101"), "another address was refused");
                }
            } finally {
                for (RawClient c : open) {
                    c.close();
                }
            }
        }
    }

    /** A PROXY protocol v2 header: PROXY command, TCP over IPv4, {@code source:port} to 127.0.0.1:8080. */
    static byte[] proxyV2(byte[] source, int port) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(new byte[] {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A});
        b.write(0x21); // version 2, PROXY
        b.write(0x11); // AF_INET, STREAM
        b.write(0);
        b.write(12);
        b.writeBytes(source);
        b.writeBytes(new byte[] {127, 0, 0, 1});
        b.write(port >> 8);
        b.write(port & 0xFF);
        b.write(8080 >> 8);
        b.write(8080 & 0xFF);
        return b.toByteArray();
    }
}

package dev.crossbar.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.crossbar.server.config.TrustedProxies;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Reading the client's address past trusted proxies, and the CIDR blocks that say who those are. */
class ForwardedAddressTest {

    private static final InetSocketAddress PROXY = new InetSocketAddress("10.0.0.5", 40000);

    private static String client(TrustedProxies trusted, String... headerPairs) {
        HttpHeaders h = new DefaultHttpHeaders();
        for (int i = 0; i < headerPairs.length; i += 2) {
            h.add(headerPairs[i], headerPairs[i + 1]);
        }
        InetSocketAddress a = ForwardedAddress.client(PROXY, h, trusted);
        return a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    @Test
    void theFirstUntrustedHopFromTheRightIsTheClient() {
        TrustedProxies one = TrustedProxies.parse(List.of("10.0.0.0/24"));
        // 6.6.6.6 is what the client claimed; 198.51.100.7 is what the trusted proxy saw.
        assertEquals("198.51.100.7:0", client(one, "X-Forwarded-For", "6.6.6.6, 198.51.100.7"));
        // Two trusted proxies in a row: the walk goes past both.
        TrustedProxies two = TrustedProxies.parse(List.of("10.0.0.0/24", "192.0.2.10"));
        assertEquals("6.6.6.6:0", client(two, "X-Forwarded-For", "6.6.6.6", "X-Forwarded-For", "192.0.2.10"));
    }

    @Test
    void forwardedWinsOverXForwardedForAndKeepsPortsAndIpv6() {
        TrustedProxies t = TrustedProxies.parse(List.of("10.0.0.0/8"));
        assertEquals("2001:db8:cafe:0:0:0:0:17:4711", client(t,
                "Forwarded", "for=192.0.2.43, for=\"[2001:db8:cafe::17]:4711\";proto=https",
                "X-Forwarded-For", "203.0.113.1"));
        assertEquals("192.0.2.60:0", client(t, "Forwarded", "for=192.0.2.60;proto=http;by=203.0.113.43"));
    }

    @Test
    void anEntryThatIsNoAddressStopsAtTheProxyThatReportedIt() {
        TrustedProxies t = TrustedProxies.parse(List.of("10.0.0.0/8"));
        assertEquals("10.0.0.5:40000", client(t, "Forwarded", "for=unknown"));
        assertEquals("10.0.0.5:40000", client(t, "X-Forwarded-For", "relay.example.org"));
        assertEquals("10.0.0.5:40000", client(t)); // no header at all
    }

    @Test
    void anUntrustedPeerIsTheClientWhateverItSays() {
        TrustedProxies t = TrustedProxies.parse(List.of("192.0.2.0/24"));
        assertEquals("10.0.0.5:40000", client(t, "X-Forwarded-For", "6.6.6.6"));
    }

    @Test
    void entriesParse() {
        assertEquals(new InetSocketAddress("192.0.2.1", 80), ForwardedAddress.parse("\"192.0.2.1:80\""));
        assertEquals(new InetSocketAddress("2001:db8::1", 0), ForwardedAddress.parse("2001:db8::1"));
        assertNull(ForwardedAddress.parse("_hidden"));
        assertNull(ForwardedAddress.parse("192.0.2.1:_port"));
        assertNull(ForwardedAddress.parse("[2001:db8::1"));
    }

    @Test
    void cidrBlocks() throws Exception {
        TrustedProxies t = TrustedProxies.parse(List.of("10.0.0.0/8", "192.0.2.7", "2001:db8::/32", " "));
        assertTrue(t.trusts(InetAddress.getByName("10.200.3.4")));
        assertFalse(t.trusts(InetAddress.getByName("11.0.0.1")));
        assertTrue(t.trusts(InetAddress.getByName("192.0.2.7")));
        assertFalse(t.trusts(InetAddress.getByName("192.0.2.8")));
        assertTrue(t.trusts(InetAddress.getByName("2001:db8:ffff::1")));
        assertFalse(t.trusts(InetAddress.getByName("2001:db9::1")));
        // An IPv4 client on a dual-stack socket.
        assertTrue(t.trusts(InetAddress.getByAddress(new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, 10, 1, 2, 3})));
        assertTrue(TrustedProxies.parse(List.of("10.1.2.128/25")).trusts(InetAddress.getByName("10.1.2.200")));
        assertFalse(TrustedProxies.parse(List.of("10.1.2.128/25")).trusts(InetAddress.getByName("10.1.2.100")));
        assertEquals("10.0.0.0/8,192.0.2.7,2001:db8::/32", t.toString());
        assertFalse(TrustedProxies.NONE.any());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TrustedProxies.parse(List.of("proxy.example.org")));
        assertTrue(e.getMessage().contains("proxy.example.org"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TrustedProxies.parse(List.of("10.0.0.0/33")));
        assertTrue(e.getMessage().contains("0 to 32"), e.getMessage());
    }
}

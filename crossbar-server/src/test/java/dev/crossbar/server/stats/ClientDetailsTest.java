package dev.crossbar.server.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** What statistics show of a client by default: addresses to their /24 or /48, user agents to the product. */
class ClientDetailsTest {

    @Test
    void addressesAreCutToTheirNetwork() {
        assertEquals("192.0.2.0/24", ClientDetails.address("192.0.2.77:54321"));
        assertEquals("192.0.2.0/24", ClientDetails.address("192.0.2.77"));
        assertEquals("2001:db8:12::/48", ClientDetails.address("2001:db8:12:34:0:0:0:1"));
        assertEquals("2001:db8:12::/48", ClientDetails.address("2001:0db8:0012:0034:0:0:0:1:443"), "JDK form with a port");
        assertEquals("2001:db8:12::/48", ClientDetails.address("[2001:db8:12::1]:443"));
        assertEquals("0:0:0::/48", ClientDetails.address("0:0:0:0:0:0:0:1:8080"));
        assertEquals("203.0.113.0/24", ClientDetails.address("::ffff:203.0.113.9"), "IPv4-mapped is IPv4");
        assertEquals("hidden", ClientDetails.address("proxy.example.org"), "never resolved, never shown");
        assertEquals("hidden", ClientDetails.address("10.0.0.1/32"), "a longer prefix is not ours");
        assertEquals("", ClientDetails.address(""));
    }

    @Test
    void truncationIsIdempotentSoRowsFromOtherNodesPassUnchanged() {
        for (String a : new String[] {"192.0.2.77:1", "2001:db8:12:34:0:0:0:1", "hidden", "x"}) {
            String once = ClientDetails.address(a);
            assertEquals(once, ClientDetails.address(once), a);
        }
        assertEquals("Mozilla", ClientDetails.userAgent(ClientDetails.userAgent("Mozilla/5.0 (X11)")));
    }

    @Test
    void userAgentsAreCutToTheFirstProductName() {
        assertEquals("Mozilla", ClientDetails.userAgent("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0"));
        assertEquals("python-requests", ClientDetails.userAgent("python-requests/2.31.0"));
        assertEquals("LabCam", ClientDetails.userAgent("LabCam (rev 7)"));
        assertEquals("curl", ClientDetails.userAgent("  curl/8.5.0"));
        assertEquals("", ClientDetails.userAgent(""));
        assertEquals("a".repeat(ClientDetails.MAX_PRODUCT_CHARS), ClientDetails.userAgent("a".repeat(300)));
    }
}

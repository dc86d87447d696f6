package dev.crossbar.server.stats;

import dev.crossbar.server.stats.Snapshot.ClientView;
import io.netty.util.NetUtil;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How much statistics show of who a client is. Addresses are personal data (GDPR), so by default a
 * reader sees them truncated (IPv4 to its /24, IPv6 to its /48) and the user agent cut to its first
 * product name; a reader with the admin scope, or every reader under
 * {@code --stats-full-client-details}, sees them whole.
 */
public enum ClientDetails {

    /** Addresses to /24 or /48, user agents to the product name. */
    TRUNCATED,
    /** As the client sent them. */
    FULL;

    /** What an address that is not an IP literal (e.g. a proxy's odd X-Forwarded-For) becomes. */
    static final String HIDDEN = "hidden";
    /** Longest product name kept: a product token is short, a longer one is not a product name. */
    static final int MAX_PRODUCT_CHARS = 40;

    /** Lower-case name, as snapshots carry it ({@code clientDetails}). */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The snapshot as a reader with this level sees it; the same object when nothing is hidden. */
    Snapshot apply(Snapshot s) {
        if (this == FULL) {
            return s.withClients(s.clients(), label());
        }
        return s.withClients(truncate(s.clients()), label());
    }

    /** Client rows with addresses and user agents truncated; rows already truncated stay as they are. */
    static List<ClientView> truncate(List<ClientView> clients) {
        List<ClientView> out = new ArrayList<>(clients.size());
        for (ClientView c : clients) {
            out.add(new ClientView(c.topic(), c.broadcaster(), c.connected(), address(c.remoteAddr()),
                    userAgent(c.userAgent()), c.stats(), c.id(), c.path(), c.schema(), c.role(), c.connectedAt(),
                    c.connectedSeconds(), c.in(), c.out(), c.dropped(), c.refused(), c.node()));
        }
        return out;
    }

    /**
     * An IPv4 address as its /24 ({@code 192.0.2.0/24}), an IPv6 one as its /48
     * ({@code 2001:db8:1::/48}), the port dropped; anything that is not an IP literal (with or without
     * a port) as {@value #HIDDEN}. Parsed by hand (Netty's {@link NetUtil}), never through a name
     * lookup. Idempotent, so a row truncated by another node passes unchanged.
     */
    static String address(String addr) {
        if (addr == null || addr.isEmpty()) {
            return "";
        }
        int slash = addr.indexOf('/');
        if (slash >= 0) {
            // Already a prefix: keep it if it is one of ours (or shorter), else hide it.
            byte[] ip = literal(addr.substring(0, slash));
            try {
                int prefix = Integer.parseInt(addr.substring(slash + 1));
                if (ip != null && prefix >= 0 && prefix <= (ip.length == 4 ? 24 : 48)) {
                    return addr;
                }
            } catch (NumberFormatException e) {
                // not a prefix length
            }
            return HIDDEN;
        }
        byte[] ip = literal(addr);
        if (ip == null) {
            int colon = addr.lastIndexOf(':');
            if (colon > 0 && colon < addr.length() - 1 && addr.substring(colon + 1).chars().allMatch(Character::isDigit)) {
                ip = literal(addr.substring(0, colon)); // host:port, [v6]:port, or v6:port as the JDK prints it
            }
        }
        if (ip == null) {
            return HIDDEN;
        }
        if (ip.length == 4) {
            return (ip[0] & 0xFF) + "." + (ip[1] & 0xFF) + "." + (ip[2] & 0xFF) + ".0/24";
        }
        return String.format("%x:%x:%x::/48", word(ip, 0), word(ip, 2), word(ip, 4));
    }

    /** The bytes of an IP literal (IPv4-mapped IPv6 as IPv4, brackets allowed), or null. */
    private static byte[] literal(String s) {
        String a = s.startsWith("[") && s.endsWith("]") ? s.substring(1, s.length() - 1) : s;
        byte[] ip = NetUtil.createByteArrayFromIpAddressString(a);
        if (ip != null && ip.length == 16 && isV4Mapped(ip)) {
            return new byte[] {ip[12], ip[13], ip[14], ip[15]};
        }
        return ip;
    }

    /**
     * The first product name of a {@code User-Agent} (RFC 9110 section 10.1.5: {@code product/version
     * comment...}): {@code Mozilla/5.0 (X11...) Chrome/120} becomes {@code Mozilla},
     * {@code python-requests/2.31} becomes {@code python-requests}. Versions, comments and later
     * products, which together identify a browser and often a person, are dropped.
     */
    static String userAgent(String ua) {
        if (ua == null) {
            return "";
        }
        String s = ua.strip();
        int end = 0;
        while (end < s.length() && end < MAX_PRODUCT_CHARS) {
            char c = s.charAt(end);
            if (c == '/' || c == ' ' || c == '\t' || c == '(' || c == ';') {
                break;
            }
            end++;
        }
        return s.substring(0, end);
    }

    private static boolean isV4Mapped(byte[] ip) {
        for (int i = 0; i < 10; i++) {
            if (ip[i] != 0) {
                return false;
            }
        }
        return ip[10] == (byte) 0xFF && ip[11] == (byte) 0xFF;
    }

    private static int word(byte[] ip, int i) {
        return ((ip[i] & 0xFF) << 8) | (ip[i + 1] & 0xFF);
    }
}

package dev.crossbar.server.audit;

import io.netty.util.NetUtil;

/**
 * What may be shown of a client's address: by default (GDPR: an address is personal data) its
 * network only, IPv4 to its /24 and IPv6 to its /48; whole only where the operator asks for it
 * ({@code --stats-full-client-details}, {@code --audit-full-addresses}) or to an administrator.
 * Statistics, the audit trail and 1:1 session offers all truncate with this one rule.
 */
public final class ClientAddresses {

    /** What an address that is not an IP literal (e.g. a proxy's odd X-Forwarded-For) becomes. */
    public static final String HIDDEN = "hidden";

    private ClientAddresses() {
    }

    /**
     * An IPv4 address as its /24 ({@code 192.0.2.0/24}), an IPv6 one as its /48
     * ({@code 2001:db8:1::/48}), the port dropped; anything that is not an IP literal (with or without
     * a port) as {@value #HIDDEN}. Parsed by hand (Netty's {@link NetUtil}), never through a name
     * lookup. Idempotent, so a row truncated by another node passes unchanged.
     */
    public static String truncate(String addr) {
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

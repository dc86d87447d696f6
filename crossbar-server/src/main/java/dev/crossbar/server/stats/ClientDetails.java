package dev.crossbar.server.stats;

import dev.crossbar.server.audit.ClientAddresses;
import dev.crossbar.server.stats.Snapshot.ClientView;
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
    static final String HIDDEN = ClientAddresses.HIDDEN;
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
                    c.connectedSeconds(), c.in(), c.out(), c.dropped(), c.refused(), c.node(), null, null));
        }
        return out;
    }

    /** An address as statistics show it by default; see {@link ClientAddresses#truncate}. */
    static String address(String addr) {
        return ClientAddresses.truncate(addr);
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
}

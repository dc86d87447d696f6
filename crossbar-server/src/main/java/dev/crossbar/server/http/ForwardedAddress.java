package dev.crossbar.server.http;

import dev.crossbar.server.config.TrustedProxies;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.NetUtil;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * Who the client is behind a chain of proxies: the hops a request's {@code Forwarded} (RFC 7239)
 * or, without it, {@code X-Forwarded-For} header lists, read from the right (the hop nearest the
 * relay) past every trusted proxy; the first address that is not one is the client. Only the
 * socket's peer being trusted makes the headers count at all; entries to the left of the first
 * untrusted hop are whatever that hop claimed, and are never taken.
 *
 * <p>An entry that is no IP address ({@code unknown}, an obfuscated {@code _node}) ends the walk:
 * the hop that reported it (the trusted proxy to its right) is the best address known.
 */
public final class ForwardedAddress {

    static final String FORWARDED = "Forwarded";
    static final String X_FORWARDED_FOR = "X-Forwarded-For";
    /** Hops read at most: a header may be 8 KiB of commas. */
    static final int MAX_HOPS = 32;

    private ForwardedAddress() {
    }

    /**
     * The client's address for a request that came from {@code peer}, a trusted proxy; {@code peer}
     * itself if the headers name no one else.
     */
    public static InetSocketAddress client(InetSocketAddress peer, HttpHeaders headers, TrustedProxies trusted) {
        List<String> hops = headers.contains(FORWARDED) ? forwardedFor(headers.getAll(FORWARDED))
                : xForwardedFor(headers.getAll(X_FORWARDED_FOR));
        InetSocketAddress current = peer;
        for (int i = hops.size() - 1; i >= 0 && trusted.trusts(current.getAddress()); i--) {
            InetSocketAddress hop = parse(hops.get(i));
            if (hop == null) {
                break;
            }
            current = hop;
        }
        return current;
    }

    /** The entries of every {@code X-Forwarded-For} header, left to right, at most {@link #MAX_HOPS} (the nearest). */
    static List<String> xForwardedFor(List<String> values) {
        List<String> hops = new ArrayList<>();
        for (String v : values) {
            for (String e : v.split(",")) {
                hops.add(e.trim());
            }
        }
        return last(hops);
    }

    /** The {@code for=} parameter of each element of every {@code Forwarded} header, left to right. */
    static List<String> forwardedFor(List<String> values) {
        List<String> hops = new ArrayList<>();
        for (String v : values) {
            for (String element : v.split(",")) {
                String forValue = "";
                for (String pair : element.split(";")) {
                    String p = pair.trim();
                    if (p.regionMatches(true, 0, "for=", 0, 4)) {
                        forValue = p.substring(4).trim();
                    }
                }
                hops.add(forValue);
            }
        }
        return last(hops);
    }

    private static List<String> last(List<String> hops) {
        return hops.size() <= MAX_HOPS ? hops : hops.subList(hops.size() - MAX_HOPS, hops.size());
    }

    /**
     * An entry as an address: {@code 192.0.2.1}, {@code 192.0.2.1:4711}, {@code 2001:db8::1},
     * {@code [2001:db8::1]:4711}, any of them in double quotes; null if it is not an IP address.
     */
    static InetSocketAddress parse(String entry) {
        String e = entry.trim();
        if (e.length() >= 2 && e.startsWith("\"") && e.endsWith("\"")) {
            e = e.substring(1, e.length() - 1).trim();
        }
        String host = e;
        int port = 0;
        if (e.startsWith("[")) {
            int close = e.indexOf(']');
            if (close < 0) {
                return null;
            }
            host = e.substring(1, close);
            port = port(e.substring(close + 1));
        } else if (e.indexOf(':') >= 0 && e.indexOf(':') == e.lastIndexOf(':')) {
            host = e.substring(0, e.indexOf(':'));
            port = port(e.substring(e.indexOf(':')));
        }
        if (port < 0) {
            return null;
        }
        InetAddress address = NetUtil.createInetAddressFromIpAddressString(host);
        return address == null ? null : new InetSocketAddress(address, port);
    }

    /** {@code :4711} as 4711, empty as 0; -1 for anything else (an obfuscated port). */
    private static int port(String suffix) {
        if (suffix.isEmpty()) {
            return 0;
        }
        if (!suffix.startsWith(":") || suffix.length() > 6) {
            return -1;
        }
        try {
            int p = Integer.parseInt(suffix.substring(1));
            return p >= 0 && p <= 65535 ? p : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}

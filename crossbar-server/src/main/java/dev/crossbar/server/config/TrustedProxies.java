package dev.crossbar.server.config;

import static java.util.Objects.requireNonNull;

import io.netty.util.NetUtil;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The proxies whose word on a client's address the relay takes ({@code --trusted-proxies}): a list
 * of CIDR blocks ({@code 10.0.0.0/8}, {@code 2001:db8::/32}) or single addresses. A connection from
 * one of them may say who its client is ({@code X-Forwarded-For}, {@code Forwarded}, the PROXY
 * protocol); from anyone else those are ignored, so a client cannot pick its own address.
 */
public final class TrustedProxies {

    /** None: every address is the socket's peer. */
    public static final TrustedProxies NONE = new TrustedProxies(List.of());

    /** One CIDR block: the address's bytes and how many leading bits must match. */
    private record Block(byte[] network, int bits, String text) {
        boolean contains(byte[] address) {
            if (address.length != network.length) {
                return false;
            }
            int whole = bits / 8;
            for (int i = 0; i < whole; i++) {
                if (address[i] != network[i]) {
                    return false;
                }
            }
            int rest = bits % 8;
            if (rest == 0) {
                return true;
            }
            int mask = (0xFF << (8 - rest)) & 0xFF;
            return (address[whole] & mask) == (network[whole] & mask);
        }
    }

    private final List<Block> blocks;

    private TrustedProxies(List<Block> blocks) {
        this.blocks = List.copyOf(blocks);
    }

    /**
     * Parses CIDR blocks or addresses; no host names (a proxy's address must not depend on DNS).
     *
     * @throws IllegalArgumentException naming the entry and what was expected
     */
    public static TrustedProxies parse(List<String> entries) {
        requireNonNull(entries, "entries");
        List<Block> blocks = new ArrayList<>();
        for (String raw : entries) {
            String e = raw.trim();
            if (e.isEmpty()) {
                continue;
            }
            int slash = e.indexOf('/');
            String addr = slash < 0 ? e : e.substring(0, slash);
            byte[] bytes = NetUtil.createByteArrayFromIpAddressString(addr);
            if (bytes == null) {
                throw new IllegalArgumentException("trustedProxies: '" + e
                        + "' (expected: an IP address or CIDR block such as 10.0.0.0/8 or 2001:db8::/32)");
            }
            int max = bytes.length * 8;
            int bits = max;
            if (slash >= 0) {
                try {
                    bits = Integer.parseInt(e.substring(slash + 1));
                } catch (NumberFormatException notANumber) {
                    bits = -1;
                }
                if (bits < 0 || bits > max) {
                    throw new IllegalArgumentException("trustedProxies: '" + e + "' (expected: a prefix length 0 to " + max + ")");
                }
            }
            blocks.add(new Block(bytes, bits, e));
        }
        return new TrustedProxies(blocks);
    }

    /** Whether any proxy is trusted. */
    public boolean any() {
        return !blocks.isEmpty();
    }

    /** Whether {@code address} is one of the trusted proxies. */
    public boolean trusts(InetAddress address) {
        if (address == null || blocks.isEmpty()) {
            return false;
        }
        byte[] bytes = address.getAddress();
        for (Block b : blocks) {
            if (b.contains(bytes)) {
                return true;
            }
        }
        // An IPv4 client of a dual-stack socket shows as ::ffff:a.b.c.d: the IPv4 blocks apply.
        if (bytes.length == 16 && isIpv4Mapped(bytes)) {
            byte[] v4 = java.util.Arrays.copyOfRange(bytes, 12, 16);
            for (Block b : blocks) {
                if (b.contains(v4)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean isIpv4Mapped(byte[] b) {
        for (int i = 0; i < 10; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return b[10] == (byte) 0xFF && b[11] == (byte) 0xFF;
    }

    /** The entries as given, comma-separated, for the start-up line and {@code --print-config}. */
    @Override
    public String toString() {
        return String.join(",", blocks.stream().map(Block::text).toList());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TrustedProxies t && t.toString().equals(toString());
    }

    @Override
    public int hashCode() {
        return toString().hashCode();
    }
}

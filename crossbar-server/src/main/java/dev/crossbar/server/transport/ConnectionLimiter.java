package dev.crossbar.server.transport;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts open connections, in total and per remote address, against their limits. Shared by all
 * channels of a server; a {@link ConnectionGuard} per channel acquires and releases.
 */
public final class ConnectionLimiter {

    /** Why a connection was refused; {@code null} from {@link #tryAcquire} means admitted. */
    public enum Refusal {
        TOO_MANY_CONNECTIONS, TOO_MANY_FROM_ADDRESS
    }

    /** Limits, changed by a configuration reload; connections already open are kept. */
    private volatile int maxTotal;
    private volatile int maxPerAddress;
    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<InetAddress, AtomicInteger> perAddress = new ConcurrentHashMap<>();

    public ConnectionLimiter(int maxTotal, int maxPerAddress) {
        limits(maxTotal, maxPerAddress);
    }

    /** Sets the limits for connections from now on (a reload); those open stay open. */
    public void limits(int maxTotal, int maxPerAddress) {
        this.maxTotal = maxTotal;
        this.maxPerAddress = maxPerAddress;
    }

    /** The limit on all connections at once. */
    public int maxTotal() {
        return maxTotal;
    }

    /** Admits one connection from {@code address}, or says why not (and then holds nothing). */
    public Refusal tryAcquire(InetAddress address) {
        if (total.incrementAndGet() > maxTotal) {
            total.decrementAndGet();
            return Refusal.TOO_MANY_CONNECTIONS;
        }
        boolean[] admitted = {false};
        perAddress.compute(address, (a, count) -> {
            AtomicInteger c = count != null ? count : new AtomicInteger();
            if (c.get() < maxPerAddress) {
                c.incrementAndGet();
                admitted[0] = true;
            }
            return c.get() == 0 ? null : c;
        });
        if (!admitted[0]) {
            total.decrementAndGet();
            return Refusal.TOO_MANY_FROM_ADDRESS;
        }
        return null;
    }

    /** Releases a connection admitted by {@link #tryAcquire}. */
    public void release(InetAddress address) {
        total.decrementAndGet();
        perAddress.computeIfPresent(address, (a, c) -> c.decrementAndGet() == 0 ? null : c);
    }

    public int open() {
        return total.get();
    }

    /** Addresses with at least one connection; the per-address map never outgrows the connections. */
    public int addresses() {
        return perAddress.size();
    }
}

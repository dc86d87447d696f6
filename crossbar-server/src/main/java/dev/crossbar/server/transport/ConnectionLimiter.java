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
        TOO_MANY_CONNECTIONS, TOO_MANY_FROM_ADDRESS, CONNECTION_RATE
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
        Refusal refusal = tryAcquireTotal();
        if (refusal != null) {
            return refusal;
        }
        refusal = tryAcquireAddress(address);
        if (refusal != null) {
            releaseTotal();
        }
        return refusal;
    }

    /** Releases a connection admitted by {@link #tryAcquire}. */
    public void release(InetAddress address) {
        releaseTotal();
        releaseAddress(address);
    }

    /**
     * Counts one connection against the total only: its address is not known yet (a proxy will
     * say it), and {@link #tryAcquireAddress} follows once it is.
     */
    public Refusal tryAcquireTotal() {
        if (total.incrementAndGet() > maxTotal) {
            total.decrementAndGet();
            return Refusal.TOO_MANY_CONNECTIONS;
        }
        return null;
    }

    public void releaseTotal() {
        total.decrementAndGet();
    }

    /** Counts one connection against its address's limit, or says why not (and then holds nothing of it). */
    public Refusal tryAcquireAddress(InetAddress address) {
        boolean[] admitted = {false};
        perAddress.compute(address, (a, count) -> {
            AtomicInteger c = count != null ? count : new AtomicInteger();
            if (c.get() < maxPerAddress) {
                c.incrementAndGet();
                admitted[0] = true;
            }
            return c.get() == 0 ? null : c;
        });
        return admitted[0] ? null : Refusal.TOO_MANY_FROM_ADDRESS;
    }

    public void releaseAddress(InetAddress address) {
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

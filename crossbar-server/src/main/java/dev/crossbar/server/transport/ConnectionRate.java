package dev.crossbar.server.transport;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;

/**
 * New connections per second from one address ({@code --max-connection-rate-per-address}): a token
 * bucket per address that holds one second's worth, so an address may open that many at once and
 * then that many a second. A flood of upgrades from one address is refused (429) before it costs a
 * handshake, while every other address goes on as before.
 *
 * <p>Memory: an address whose bucket has refilled is no different from one never seen, so when the
 * map grows past {@link #SWEEP_AT} entries those are dropped. Any thread.
 */
final class ConnectionRate {

    /** Addresses held before a sweep drops those whose bucket is full again. */
    static final int SWEEP_AT = 10_000;

    /** One address's bucket: tokens as of {@code atNanos}. Guarded by the map's compute. */
    private static final class Bucket {
        double tokens;
        long atNanos;
    }

    /** Connections per second from one address; 0 for no limit. Changed by a reload. */
    private volatile int perSecond;
    private final ConcurrentHashMap<InetAddress, Bucket> buckets = new ConcurrentHashMap<>();

    ConnectionRate(int perSecond) {
        limit(perSecond);
    }

    void limit(int perSecond) {
        if (perSecond < 0) {
            throw new IllegalArgumentException("perSecond: " + perSecond + " (expected: >= 0, 0 = off)");
        }
        this.perSecond = perSecond;
    }

    int limit() {
        return perSecond;
    }

    /** Takes one connection's token for {@code address}; false if the address is over its rate. */
    boolean tryAcquire(InetAddress address, long nowNanos) {
        int rate = perSecond;
        if (rate == 0) {
            return true;
        }
        if (buckets.size() > SWEEP_AT) {
            sweep(rate, nowNanos);
        }
        boolean[] taken = {false};
        buckets.compute(address, (a, b) -> {
            Bucket bucket = b;
            if (bucket == null) {
                bucket = new Bucket();
                bucket.tokens = rate;
                bucket.atNanos = nowNanos;
            } else {
                bucket.tokens = Math.min(rate, bucket.tokens + (nowNanos - bucket.atNanos) * rate / 1e9);
                bucket.atNanos = nowNanos;
            }
            if (bucket.tokens >= 1) {
                bucket.tokens -= 1;
                taken[0] = true;
            }
            return bucket;
        });
        return taken[0];
    }

    private void sweep(int rate, long nowNanos) {
        // Read without the bucket's lock: a bucket refilled by a racing connection is at worst
        // dropped with a token taken, and that address gets one connection more.
        buckets.entrySet().removeIf(e -> e.getValue().tokens + (nowNanos - e.getValue().atNanos) * rate / 1e9 >= rate);
    }

    /** Addresses with a bucket now. */
    int addresses() {
        return buckets.size();
    }
}

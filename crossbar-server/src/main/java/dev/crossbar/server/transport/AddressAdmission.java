package dev.crossbar.server.transport;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.http.HandshakeFailures.Reason;
import dev.crossbar.server.http.Refused;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.net.InetAddress;

/**
 * Admits a connection from its client's real address, once that is known: at connect for a
 * client that reached the relay directly, after the PROXY header ({@link ProxyHeader}) or the
 * first request's forwarding headers ({@link ForwardedClient}) behind a trusted proxy. First the
 * address's new-connection rate, then its count of open connections. A connection refused is not
 * closed here: it is marked {@link Refused}, so the HTTP gate answers its request with 429 and a
 * reason. One per server, any thread.
 */
final class AddressAdmission {

    private final ConnectionLimiter limiter;
    private final ConnectionRate rate;

    AddressAdmission(ConnectionLimiter limiter, int perAddressRate) {
        this.limiter = requireNonNull(limiter, "limiter");
        this.rate = new ConnectionRate(perAddressRate);
    }

    /** New connections per second from one address from now on (a reload); 0 for none. */
    void rate(int perSecond) {
        rate.limit(perSecond);
    }

    ConnectionLimiter limiter() {
        return limiter;
    }

    /** Counts {@code ch} against {@code address}'s limits, releasing when it closes; marks it refused if over. */
    void admit(Channel ch, InetAddress address) {
        if (ch.hasAttr(Refused.KEY) && ch.attr(Refused.KEY).get() != null) {
            return; // refused already (the relay is full): the address takes nothing
        }
        ConnectionLimiter.Refusal refusal = rate.tryAcquire(address, System.nanoTime()) ? null
                : ConnectionLimiter.Refusal.CONNECTION_RATE;
        if (refusal == null) {
            refusal = limiter.tryAcquireAddress(address);
            if (refusal == null) {
                ch.closeFuture().addListener(f -> limiter.releaseAddress(address));
                return;
            }
        }
        refuse(ch, refusal);
    }

    static void refuse(Channel ch, ConnectionLimiter.Refusal refusal) {
        ch.attr(Refused.KEY).set(switch (refusal) {
            case TOO_MANY_CONNECTIONS -> new Refused(HttpResponseStatus.SERVICE_UNAVAILABLE,
                    Reason.TOO_MANY_CONNECTIONS, "the relay is at its connection limit; try again later");
            case TOO_MANY_FROM_ADDRESS -> new Refused(HttpResponseStatus.TOO_MANY_REQUESTS,
                    Reason.TOO_MANY_FROM_ADDRESS, "too many connections from your address");
            case CONNECTION_RATE -> new Refused(HttpResponseStatus.TOO_MANY_REQUESTS,
                    Reason.CONNECTION_RATE, "too many new connections from your address; slow down");
        });
    }
}

package dev.crossbar.server;

import dev.crossbar.server.config.NatsConfig;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.config.TlsConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What a running relay cannot change without a restart: its sockets and threads, the cluster
 * link, TLS, whether tokens are checked at all, and the sizes of what it set up at start. A reload
 * that changes any of these is refused whole, naming them; everything else (routes for new
 * topics, keys, limits, privacy, log level) is applied to connections and topics from then on.
 */
final class RestartOnly {

    private RestartOnly() {
    }

    /** The options whose values differ between {@code running} and {@code next} and need a restart. */
    static List<String> changed(ServerConfig running, ServerConfig next) {
        List<String> out = new ArrayList<>();
        check(out, "--listen", running.listen(), next.listen());
        check(out, "--admin-listen", running.adminListen(), next.adminListen());
        check(out, "--event-loops", running.eventLoops(), next.eventLoops());
        check(out, "--transport", running.preferNativeTransport(), next.preferNativeTransport());
        check(out, "--home-loop-members", running.homeLoopMembers(), next.homeLoopMembers());
        check(out, "--max-loop-backlog", running.maxLoopBacklogBytes(), next.maxLoopBacklogBytes());
        check(out, "--node-name", running.nodeName(), next.nodeName());
        check(out, "--nats*", nats(running.nats()), nats(next.nats()));
        check(out, "--tls-*", tls(running.tls()), tls(next.tls()));
        check(out, "--stats-interval", running.statsInterval(), next.statsInterval());
        check(out, "--stats-cluster-timeout", running.statsClusterTimeout(), next.statsClusterTimeout());
        check(out, "--stats-cluster-max-reply", running.statsClusterMaxReplyBytes(), next.statsClusterMaxReplyBytes());
        check(out, "--health-probe-interval", running.healthProbeInterval(), next.healthProbeInterval());
        check(out, "--health-max-probe-age", running.healthMaxProbeAge(), next.healthMaxProbeAge());
        check(out, "--last-values, --last-values-size, --keyframe-buffer", running.replayLimits(), next.replayLimits());
        check(out, "--session-url", running.sessions().url(), next.sessions().url());
        check(out, "access control on or off (--auth-* keys)", running.auth().enabled(), next.auth().enabled());
        check(out, "--auth-first-message", running.auth().firstMessage(), next.auth().firstMessage());
        check(out, "--auth-max-revocations", running.auth().maxRevocations(), next.auth().maxRevocations());
        return out;
    }

    private static void check(List<String> out, String option, Object a, Object b) {
        if (!Objects.equals(a, b)) {
            out.add(option);
        }
    }

    /** Every field of the NATS settings, secrets included: a changed password needs a restart too. */
    private static List<Object> nats(NatsConfig n) {
        return n == null ? null : List.of(n.servers(), String.valueOf(n.user()), String.valueOf(n.password()),
                String.valueOf(n.token()), String.valueOf(n.credsFile()), n.tls(), String.valueOf(n.tlsCaFile()),
                n.maxPendingBytes(), n.losslessTimeout());
    }

    private static List<Object> tls(TlsConfig t) {
        return List.of(t.enabled(), String.valueOf(t.certificate()), String.valueOf(t.privateKey()), t.provider(),
                t.reloadInterval());
    }
}

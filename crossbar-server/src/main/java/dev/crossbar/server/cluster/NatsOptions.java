package dev.crossbar.server.cluster;

import dev.crossbar.server.config.NatsConfig;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.security.NoSuchAlgorithmException;

/**
 * What every connection this node opens to NATS shares (the relay's link, the 1:1 sessions' and
 * the administrator's): the servers, reconnecting for as long as the node runs, and the operator's
 * credentials and TLS. Each link adds what is its own.
 */
final class NatsOptions {

    private NatsOptions() {
    }

    static Options.Builder base(NatsConfig c, String connectionName) {
        Options.Builder b = new Options.Builder()
                .servers(c.servers().toArray(new String[0]))
                .connectionName(connectionName)
                .maxReconnects(-1)
                .reconnectWait(c.reconnectWait())
                .connectionTimeout(c.connectTimeout());
        if (c.user() != null) {
            b.userInfo(c.user().toCharArray(), c.password().toCharArray());
        }
        if (c.token() != null) {
            b.token(c.token().toCharArray());
        }
        if (c.credsFile() != null) {
            b.authHandler(Nats.credentials(c.credsFile().toString()));
        }
        if (c.tlsCaFile() != null) {
            b.sslContext(NatsTls.trusting(c.tlsCaFile()));
        } else if (c.tls()) {
            try {
                b.secure();
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalArgumentException("natsTls: no TLS in this JVM: " + e.getMessage(), e);
            }
        }
        return b;
    }
}

package dev.crossbar.server.cluster;

import dev.crossbar.server.config.CaCertificates;
import java.nio.file.Path;
import javax.net.ssl.SSLContext;

/** Builds the TLS context that trusts the CA certificates of a PEM file, as NATS deployments issue them. */
public final class NatsTls {

    private NatsTls() {
    }

    /**
     * An SSL context trusting exactly the certificates in {@code caFile} (PEM or DER, one or more).
     *
     * @throws IllegalArgumentException naming the file, when it holds no usable certificate
     */
    public static SSLContext trusting(Path caFile) {
        return CaCertificates.trusting(caFile, "natsTlsCa");
    }
}

package dev.crossbar.server.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** The TLS context that trusts the CA certificates of a PEM file: a NATS cluster's, an identity provider's. */
public final class CaCertificates {

    private CaCertificates() {
    }

    /**
     * An SSL context trusting exactly the certificates in {@code caFile} (PEM or DER, one or more).
     *
     * @param option the setting that named the file, for the error message
     * @throws IllegalArgumentException naming the setting and the file, when it holds no usable certificate
     */
    public static SSLContext trusting(Path caFile, String option) {
        try (InputStream in = Files.newInputStream(caFile)) {
            Collection<? extends Certificate> certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (certs.isEmpty()) {
                throw new IllegalArgumentException(option + ": " + caFile + " (expected: PEM certificates, found none)");
            }
            KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
            trust.load(null, null);
            int i = 0;
            for (Certificate c : certs) {
                trust.setCertificateEntry("ca-" + i++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return ctx;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException(option + ": " + caFile + " (expected: PEM certificates): " + e.getMessage(), e);
        }
    }
}

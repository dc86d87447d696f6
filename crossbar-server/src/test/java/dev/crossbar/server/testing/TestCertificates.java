package dev.crossbar.server.testing;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Date;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Self-signed server certificates made at test time with BouncyCastle, valid for 127.0.0.1 and
 * localhost, written as the PEM files an operator would give the relay.
 */
public final class TestCertificates {

    /** A certificate, its key, and where both were written. */
    public record Issued(X509Certificate certificate, KeyPair keys, Path certFile, Path keyFile) {

        /** A client TLS context that trusts this certificate only. */
        public SSLContext clientContext() {
            return trusting(certificate);
        }
    }

    /** A client TLS context that trusts exactly {@code certificates}. */
    public static SSLContext trusting(X509Certificate... certificates) {
        try {
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            for (int i = 0; i < certificates.length; i++) {
                ks.setCertificateEntry("relay" + i, certificates[i]);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return ctx;
        } catch (GeneralSecurityException | IOException e) {
            throw new AssertionError(e);
        }
    }

    private TestCertificates() {
    }

    /**
     * An EC P-256 certificate for {@code cn}, written to {@code dir/name.crt} and {@code dir/name.key}.
     * EC because its key is made in milliseconds; an RSA key takes seconds on a small machine.
     */
    public static Issued issue(Path dir, String name, String cn) {
        return issue(dir, name, cn, Tokens.ecKeyPair(), "SHA256withECDSA");
    }

    /** As {@link #issue(Path, String, String)} with an RSA-2048 key, the most common kind of server key. */
    public static Issued issueRsa(Path dir, String name, String cn) {
        return issue(dir, name, cn, Tokens.rsaKeyPair(), "SHA256withRSA");
    }

    private static Issued issue(Path dir, String name, String cn, KeyPair keys, String signature) {
        try {
            Instant now = Instant.now();
            X500Name subject = new X500Name("CN=" + cn);
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(subject,
                    BigInteger.valueOf(now.toEpochMilli()).shiftLeft(16).add(BigInteger.valueOf(name.hashCode() & 0xffff)),
                    Date.from(now.minus(1, ChronoUnit.HOURS)), Date.from(now.plus(90, ChronoUnit.DAYS)), subject,
                    keys.getPublic());
            b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
                    new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
                    new GeneralName(GeneralName.dNSName, "localhost")}));
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            X509Certificate cert = new JcaX509CertificateConverter().getCertificate(
                    b.build(new JcaContentSignerBuilder(signature).build(keys.getPrivate())));
            Path certFile = dir.resolve(name + ".crt");
            Path keyFile = dir.resolve(name + ".key");
            Files.writeString(certFile, pem(cert));
            // PKCS#8 ("BEGIN PRIVATE KEY"), as certbot and most tools write it.
            Files.writeString(keyFile, pem(new org.bouncycastle.openssl.jcajce.JcaPKCS8Generator(keys.getPrivate(), null)));
            return new Issued(cert, keys, certFile, keyFile);
        } catch (Exception e) {
            throw new AssertionError("cannot make a test certificate", e);
        }
    }

    private static String pem(Object o) throws IOException {
        StringWriter w = new StringWriter();
        try (JcaPEMWriter pw = new JcaPEMWriter(w)) {
            if (o instanceof org.bouncycastle.util.io.pem.PemObjectGenerator g) {
                pw.writeObject(g);
            } else {
                pw.writeObject(o);
            }
        }
        return w.toString();
    }

    /** Parses a PEM certificate file (to compare with what a server presented). */
    public static X509Certificate read(Path file) {
        try {
            return (X509Certificate) CertificateFactory.getInstance("X.509")
                    .generateCertificate(new ByteArrayInputStream(Files.readAllBytes(file)));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}

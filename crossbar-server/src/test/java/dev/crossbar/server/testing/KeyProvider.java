package dev.crossbar.server.testing;

import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyUse;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.interfaces.ECPublicKey;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * An identity provider's key set endpoint for tests: the JDK's HTTPS server on loopback, with a
 * test certificate, serving {@code /jwks} from a set of EC keys the test rotates ({@link #publish}),
 * or failing ({@link #down}). Counts the fetches.
 */
public final class KeyProvider implements AutoCloseable {

    private final HttpsServer server;
    private final TestCertificates.Issued certificate;
    private final List<JWK> published = new CopyOnWriteArrayList<>();
    private final AtomicInteger fetches = new AtomicInteger();
    private volatile boolean down;

    public KeyProvider(Path dir) {
        certificate = TestCertificates.issue(dir, "idp", "localhost");
        try {
            server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
            server.setHttpsConfigurator(new HttpsConfigurator(serverContext(certificate)));
            server.createContext("/jwks", exchange -> {
                fetches.incrementAndGet();
                byte[] body = down ? "provider down".getBytes(StandardCharsets.UTF_8)
                        : new JWKSet(List.copyOf(published)).toString(true).getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "application/json");
                exchange.sendResponseHeaders(down ? 503 : 200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            });
            server.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static SSLContext serverContext(TestCertificates.Issued c) {
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setKeyEntry("idp", c.keys().getPrivate(), new char[0], new Certificate[] {c.certificate()});
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, new char[0]);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), null, null);
            return ctx;
        } catch (Exception e) {
            throw new AssertionError("cannot make the provider's TLS context", e);
        }
    }

    /** The public half of {@code keys} as a JWK named {@code kid}. */
    public static JWK jwk(KeyPair keys, String kid) {
        return new ECKey.Builder(Curve.P_256, (ECPublicKey) keys.getPublic()).keyID(kid).keyUse(KeyUse.SIGNATURE).build();
    }

    /** Serves exactly these keys from now on. */
    public void publish(JWK... keys) {
        published.clear();
        published.addAll(List.of(keys));
    }

    /** Answers 503 (true) or the keys again (false). */
    public void down(boolean isDown) {
        down = isDown;
    }

    public URI url() {
        return URI.create("https://localhost:" + server.getAddress().getPort() + "/jwks");
    }

    /** The CA file the relay trusts the provider by ({@code --auth-jwks-ca}). */
    public Path caFile() {
        return certificate.certFile();
    }

    public int fetches() {
        return fetches.get();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}

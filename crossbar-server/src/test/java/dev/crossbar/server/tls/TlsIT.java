package dev.crossbar.server.tls;

import static dev.crossbar.server.testing.RelayServerExtension.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.crossbar.server.CrossbarServer;
import dev.crossbar.server.config.ServerConfig;
import dev.crossbar.server.config.TlsConfig;
import dev.crossbar.server.config.TlsProvider;
import dev.crossbar.server.testing.HttpExchange;
import dev.crossbar.server.testing.JdkClient;
import dev.crossbar.server.testing.NettyClient;
import dev.crossbar.server.testing.TestCertificates.Issued;
import dev.crossbar.server.testing.TestCertificates;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletionException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * wss:// and https:// with certificates generated at test time, through both TLS providers, with
 * the JDK's HttpClient and a Netty client; plain text on the TLS port; certificate reloads.
 */
class TlsIT {

    /** Where crossbar-server's pom ships netty-tcnative's BoringSSL: there the OpenSSL cases must run. */
    private static final boolean SHIPS_BORINGSSL = System.getProperty("os.name").startsWith("Linux")
            && java.util.Set.of("amd64", "x86_64", "aarch64").contains(System.getProperty("os.arch"));

    @TempDir
    Path dir;

    private static CrossbarServer start(Issued cert, TlsProvider provider, Duration reloadInterval) {
        if (provider == TlsProvider.OPENSSL && SHIPS_BORINGSSL) {
            assertTrue(OpenSsl.isAvailable(), "the build ships BoringSSL for this platform: " + OpenSsl.unavailabilityCause());
        }
        // Elsewhere (macOS, Windows, other CPUs) the relay uses the JDK's TLS, and so does this test.
        assumeTrue(provider != TlsProvider.OPENSSL || OpenSsl.isAvailable(), "OpenSSL not available here");
        return CrossbarServer.start(ServerConfig.builder()
                .listen("127.0.0.1:0")
                .eventLoops(2)
                .shutdownGrace(Duration.ofSeconds(1))
                .tls(TlsConfig.of(cert.certFile(), cert.keyFile(), provider, reloadInterval))
                .build());
    }

    private static HttpClient https(SSLContext trust) {
        return HttpClient.newBuilder().sslContext(trust).version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
    }

    private static URI wss(CrossbarServer s, String path) {
        return URI.create("wss://127.0.0.1:" + s.port() + path);
    }

    private static SslContext nettyTrust(X509Certificate... certs) throws Exception {
        return SslContextBuilder.forClient().trustManager(certs).build();
    }

    /** The certificate a fresh TLS connection to the relay is shown. */
    private static X509Certificate presented(CrossbarServer s, SSLContext trust) throws Exception {
        try (SSLSocket socket = (SSLSocket) trust.getSocketFactory().createSocket("127.0.0.1", s.port())) {
            socket.startHandshake();
            return (X509Certificate) socket.getSession().getPeerCertificates()[0];
        }
    }

    private static void awaitMembers(CrossbarServer s, int n) {
        await(n + " members", Duration.ofSeconds(5),
                () -> s.topics().topics().stream().mapToInt(t -> t.members().length).sum() == n);
    }

    @ParameterizedTest
    @EnumSource(value = TlsProvider.class, names = {"JDK", "OPENSSL"})
    void wssAndHttpsServeOnThePortWithBothClients(TlsProvider provider) throws Exception {
        Issued cert = TestCertificates.issueRsa(dir, "relay", "relay.test");
        try (CrossbarServer server = start(cert, provider, TlsConfig.DEFAULT_RELOAD_INTERVAL)) {
            assertEquals(provider == TlsProvider.JDK ? "jdk" : "openssl", server.tls().providerName());
            HttpClient http = https(cert.clientContext());
            HttpResponse<String> health = http.send(HttpRequest.newBuilder(
                    URI.create("https://127.0.0.1:" + server.port() + "/healthz")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode());
            assertEquals("ok\n", health.body());

            byte[] big = new byte[256 * 1024];
            new Random(7).nextBytes(big);
            try (JdkClient pub = JdkClient.connect(http, wss(server, "/in/cam"), Map.of());
                 NettyClient sub = NettyClient.connect(wss(server, "/out/cam"), nettyTrust(cert.certificate()),
                         new DefaultHttpHeaders());
                 JdkClient jdkSub = JdkClient.connect(http, wss(server, "/out/cam"), Map.of())) {
                awaitMembers(server, 3);
                pub.sendText("over tls");
                pub.sendBinary(big);
                assertEquals("over tls", sub.take().string());
                assertArrayEquals(big, sub.take().data());
                assertEquals("over tls", jdkSub.take().string());
                assertArrayEquals(big, jdkSub.take().data());
            }
        }
    }

    @Test
    void plainTextOnTheTlsPortIsRefusedWithA400SayingSo() throws Exception {
        Issued cert = TestCertificates.issue(dir, "relay", "relay.test");
        try (CrossbarServer server = start(cert, TlsProvider.AUTO, TlsConfig.DEFAULT_RELOAD_INTERVAL)) {
            String response = HttpExchange.upgrade(server.port(), "/out/cam", Map.of());
            assertTrue(response.startsWith("HTTP/1.1 400 Bad Request\r\n"), response);
            assertEquals("400 Bad Request: this port requires TLS; connect with https:// or wss:// here\n",
                    HttpExchange.body(response));
            CompletionException e = assertThrows(CompletionException.class,
                    () -> JdkClient.connect(URI.create("ws://127.0.0.1:" + server.port() + "/out/cam")));
            assertTrue(e.getCause() instanceof java.net.http.WebSocketHandshakeException
                    || e.getCause() instanceof java.io.IOException, e.toString());
            assertEquals(0, server.connections());
            // A client that does not trust the certificate fails its handshake; the relay serves on.
            assertThrows(javax.net.ssl.SSLHandshakeException.class, () -> presented(server, SSLContext.getDefault()));
            assertEquals(cert.certificate(), presented(server, cert.clientContext()));
        }
    }

    private static void replace(Issued with, Path certFile, Path keyFile) throws Exception {
        Files.copy(with.certFile(), certFile, StandardCopyOption.REPLACE_EXISTING);
        Files.copy(with.keyFile(), keyFile, StandardCopyOption.REPLACE_EXISTING);
        // Modification times move forward, as they do when a renewal writes the files.
        FileTime later = FileTime.fromMillis(System.currentTimeMillis() + 2000);
        Files.setLastModifiedTime(certFile, later);
        Files.setLastModifiedTime(keyFile, later);
    }

    @ParameterizedTest
    @EnumSource(value = TlsProvider.class, names = {"JDK", "OPENSSL"})
    void aRenewedCertificateIsServedToNewConnectionsWhileLiveOnesStayOpen(TlsProvider provider) throws Exception {
        Issued first = TestCertificates.issue(dir, "first", "first.relay.test");
        Issued second = TestCertificates.issue(dir, "second", "second.relay.test");
        Path certFile = dir.resolve("live.crt");
        Path keyFile = dir.resolve("live.key");
        Files.copy(first.certFile(), certFile);
        Files.copy(first.keyFile(), keyFile);
        Issued live = new Issued(first.certificate(), first.keys(), certFile, keyFile);
        SSLContext trustBoth = TestCertificates.trusting(first.certificate(), second.certificate());
        try (CrossbarServer server = start(live, provider, Duration.ofMillis(100))) {
            assertEquals(first.certificate(), presented(server, trustBoth));
            try (JdkClient pub = JdkClient.connect(https(first.clientContext()), wss(server, "/in/cam"), Map.of());
                 NettyClient sub = NettyClient.connect(wss(server, "/out/cam"), nettyTrust(first.certificate()),
                         new DefaultHttpHeaders())) {
                awaitMembers(server, 2);
                pub.sendText("before");
                assertEquals("before", sub.take().string());

                replace(second, certFile, keyFile);
                await("the second certificate served", Duration.ofSeconds(5),
                        () -> second.certificate().equals(server.tls().certificate()));
                assertEquals(second.certificate(), presented(server, trustBoth));
                // A client that trusts only the new certificate connects; the old connections relay on.
                try (JdkClient newSub = JdkClient.connect(https(second.clientContext()), wss(server, "/out/cam"), Map.of())) {
                    awaitMembers(server, 3);
                    pub.sendText("after");
                    assertEquals("after", sub.take().string());
                    assertEquals("after", newSub.take().string());
                }
                assertFalse(sub.closed.isDone(), "the live connection was not dropped");
                assertFalse(pub.closeCode.isDone());
            }
        }
    }

    @Test
    void aKeyThatDoesNotMatchTheCertificateIsNotLoadedAndTheOldOneIsKept() throws Exception {
        Issued first = TestCertificates.issue(dir, "first", "first.relay.test");
        Issued second = TestCertificates.issue(dir, "second", "second.relay.test");
        Path certFile = dir.resolve("live.crt");
        Path keyFile = dir.resolve("live.key");
        Files.copy(first.certFile(), certFile);
        Files.copy(first.keyFile(), keyFile);
        SSLContext trustBoth = TestCertificates.trusting(first.certificate(), second.certificate());
        try (CrossbarServer server = start(new Issued(first.certificate(), first.keys(), certFile, keyFile),
                TlsProvider.AUTO, Duration.ofHours(1))) {
            // Half a renewal: the new certificate beside the old key.
            Files.copy(second.certFile(), certFile, StandardCopyOption.REPLACE_EXISTING);
            assertFalse(server.reloadTls());
            assertEquals(first.certificate(), server.tls().certificate());
            assertEquals(first.certificate(), presented(server, trustBoth));
            // The renewal completes: an explicit reload (as on SIGHUP) serves it.
            Files.copy(second.keyFile(), keyFile, StandardCopyOption.REPLACE_EXISTING);
            assertTrue(server.reloadTls());
            assertEquals(second.certificate(), presented(server, trustBoth));
        }
    }

    @Test
    void aMissingOrUnreadableCertificateStopsStartUpWithOneLine() throws Exception {
        Issued cert = TestCertificates.issue(dir, "relay", "relay.test");
        Files.writeString(dir.resolve("empty.key"), "not a key\n", StandardCharsets.US_ASCII);
        CrossbarServer.StartException missing = assertThrows(CrossbarServer.StartException.class,
                () -> start(new Issued(cert.certificate(), cert.keys(), dir.resolve("nope.crt"), cert.keyFile()),
                        TlsProvider.AUTO, Duration.ofSeconds(5)));
        assertTrue(missing.getMessage().startsWith("TLS: ") && missing.getMessage().contains("nope.crt"), missing.getMessage());
        CrossbarServer.StartException badKey = assertThrows(CrossbarServer.StartException.class,
                () -> start(new Issued(cert.certificate(), cert.keys(), cert.certFile(), dir.resolve("empty.key")),
                        TlsProvider.AUTO, Duration.ofSeconds(5)));
        assertTrue(badKey.getMessage().contains("empty.key"), badKey.getMessage());
    }
}

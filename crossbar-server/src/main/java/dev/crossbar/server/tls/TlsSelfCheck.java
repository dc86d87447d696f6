package dev.crossbar.server.tls;

import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.netty.util.ReferenceCountUtil;
import java.nio.ByteBuffer;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;

/**
 * Proves a server context works before it is served: a TLS handshake in memory between it and a
 * throwaway client, which must end with the client seeing the expected certificate. Catches a key
 * that does not match its certificate, which no builder checks and which would otherwise fail
 * every new client's handshake. The client trusts anything: this checks the pair, not the chain.
 */
final class TlsSelfCheck {

    /** Handshake round trips allowed; a TLS 1.2 or 1.3 handshake needs a handful. */
    private static final int MAX_ROUNDS = 50;

    private TlsSelfCheck() {
    }

    static void handshake(SslContext server, X509Certificate expected) throws SSLException {
        SslContext clientContext = SslContextBuilder.forClient()
                .sslProvider(SslProvider.JDK)
                .trustManager(InsecureTrustManagerFactory.INSTANCE)
                .build();
        SSLEngine client = clientContext.newEngine(UnpooledByteBufAllocator.DEFAULT, "crossbar-self-check", 443);
        SSLEngine srv = server.newEngine(UnpooledByteBufAllocator.DEFAULT);
        try {
            run(client, srv);
            Certificate[] seen = client.getSession().getPeerCertificates();
            if (seen.length == 0 || !seen[0].equals(expected)) {
                throw new SSLException("self-check: the server did not present the certificate from the file");
            }
        } catch (SSLException e) {
            throw new SSLException("the certificate and key do not work together: " + e.getMessage(), e);
        } finally {
            ReferenceCountUtil.release(client);
            ReferenceCountUtil.release(srv);
        }
    }

    private static void run(SSLEngine client, SSLEngine server) throws SSLException {
        int packet = Math.max(client.getSession().getPacketBufferSize(), server.getSession().getPacketBufferSize());
        ByteBuffer toServer = ByteBuffer.allocate(4 * packet);
        ByteBuffer toClient = ByteBuffer.allocate(4 * packet);
        ByteBuffer clientApp = ByteBuffer.allocate(4 * packet);
        ByteBuffer serverApp = ByteBuffer.allocate(4 * packet);
        ByteBuffer empty = ByteBuffer.allocate(0);
        client.beginHandshake();
        server.beginHandshake();
        for (int round = 0; round < MAX_ROUNDS; round++) {
            client.wrap(empty, toServer);
            runTasks(client);
            server.wrap(empty, toClient);
            runTasks(server);
            toServer.flip();
            server.unwrap(toServer, serverApp);
            toServer.compact();
            runTasks(server);
            toClient.flip();
            client.unwrap(toClient, clientApp);
            toClient.compact();
            runTasks(client);
            if (done(client) && done(server) && toServer.position() == 0 && toClient.position() == 0) {
                return;
            }
        }
        throw new SSLException("self-check: handshake did not complete in " + MAX_ROUNDS + " rounds");
    }

    private static boolean done(SSLEngine e) {
        HandshakeStatus s = e.getHandshakeStatus();
        return s == HandshakeStatus.NOT_HANDSHAKING || s == HandshakeStatus.FINISHED;
    }

    private static void runTasks(SSLEngine e) {
        Runnable task;
        while ((task = e.getDelegatedTask()) != null) {
            task.run();
        }
    }
}

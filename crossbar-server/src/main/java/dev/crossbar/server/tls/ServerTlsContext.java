package dev.crossbar.server.tls;

import static java.util.Objects.requireNonNull;

import dev.crossbar.server.config.TlsConfig;
import dev.crossbar.server.config.TlsProvider;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's current {@link SslContext}, replaced when the certificate or key files change.
 *
 * <p>Each new connection takes {@link #get()} when it starts TLS; a reload only swaps what that
 * returns, so live connections keep the context they started with and are never dropped. A
 * candidate context must first complete a TLS handshake in memory, serving the certificate from
 * the file: a half-renewed pair (new certificate, old key, as a renewal that replaces the files
 * one by one can leave for a moment) or an unreadable file is logged and the old certificate kept,
 * and the next change is tried again.
 *
 * <p>The files are checked every reload interval on one daemon thread (modification time, size and
 * the real path behind a symlink, so certbot's {@code live/} links count); {@link #reload()} forces
 * a reload, e.g. on SIGHUP.
 */
public final class ServerTlsContext implements Supplier<SslContext>, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ServerTlsContext.class);

    private final TlsConfig config;
    private final SslProvider provider;
    private final ScheduledExecutorService poller;
    private volatile Loaded current;
    /** Stamp of the files whose last load failed, so each failure is logged once. */
    private FileStamp failed;

    /** A built context and the files it came from. */
    private record Loaded(SslContext context, X509Certificate certificate, FileStamp stamp) {
    }

    /** What identifies the files' contents without reading them. */
    private record FileStamp(String certReal, long certModified, long certSize, String keyReal, long keyModified,
                             long keySize) {
    }

    private ServerTlsContext(TlsConfig config, SslProvider provider, Loaded first) {
        this.config = config;
        this.provider = provider;
        this.current = first;
        this.poller = Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("crossbar-tls-reload", true));
        long interval = config.reloadInterval().toMillis();
        poller.scheduleWithFixedDelay(this::check, interval, interval, TimeUnit.MILLISECONDS);
    }

    /**
     * Loads the certificate and key and starts watching them.
     *
     * @throws IllegalStateException with one line saying what is wrong (file, key, provider)
     */
    public static ServerTlsContext start(TlsConfig config) {
        requireNonNull(config, "config");
        if (!config.enabled()) {
            throw new IllegalArgumentException("config: TLS is off (expected: certificate and key files)");
        }
        SslProvider provider = provider(config.provider());
        try {
            return new ServerTlsContext(config, provider, load(config, provider));
        } catch (IOException | CertificateException e) {
            throw new IllegalStateException("TLS: " + e.getMessage(), e);
        }
    }

    private static SslProvider provider(TlsProvider wanted) {
        return switch (wanted) {
            case JDK -> SslProvider.JDK;
            case OPENSSL -> {
                if (!OpenSsl.isAvailable()) {
                    Throwable cause = OpenSsl.unavailabilityCause();
                    throw new IllegalStateException("TLS: OpenSSL is not available on this platform ("
                            + (cause == null ? "unknown reason" : cause.getMessage()) + "); use --tls-provider jdk or auto");
                }
                yield SslProvider.OPENSSL;
            }
            case AUTO -> OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
        };
    }

    private static Loaded load(TlsConfig config, SslProvider provider) throws IOException, CertificateException {
        FileStamp stamp = stamp(config);
        X509Certificate leaf = leafCertificate(config.certificate());
        SslContext context;
        try {
            context = SslContextBuilder.forServer(config.certificate().toFile(), config.privateKey().toFile())
                    .sslProvider(provider)
                    .build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IOException("cannot use " + config.certificate() + " with " + config.privateKey() + ": "
                    + rootMessage(e), e);
        }
        TlsSelfCheck.handshake(context, leaf);
        return new Loaded(context, leaf, stamp);
    }

    private static X509Certificate leafCertificate(Path file) throws IOException, CertificateException {
        try (InputStream in = Files.newInputStream(file)) {
            var certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (certs.isEmpty()) {
                throw new CertificateException(file + " holds no certificate (expected: PEM, BEGIN CERTIFICATE)");
            }
            return (X509Certificate) certs.iterator().next();
        }
    }

    private static FileStamp stamp(TlsConfig c) throws IOException {
        Path cert = c.certificate();
        Path key = c.privateKey();
        return new FileStamp(cert.toRealPath().toString(), Files.getLastModifiedTime(cert).toMillis(), Files.size(cert),
                key.toRealPath().toString(), Files.getLastModifiedTime(key).toMillis(), Files.size(key));
    }

    private static String rootMessage(Throwable t) {
        Throwable r = t;
        while (r.getCause() != null && r.getCause() != r) {
            r = r.getCause();
        }
        return r == t ? String.valueOf(t.getMessage()) : t.getMessage() + " (" + r.getMessage() + ")";
    }

    /** The context for a new connection. */
    @Override
    public SslContext get() {
        return current.context();
    }

    /** The leaf certificate now served. */
    public X509Certificate certificate() {
        return current.certificate();
    }

    /** "openssl" or "jdk". */
    public String providerName() {
        return provider == SslProvider.JDK ? "jdk" : "openssl";
    }

    /** The periodic check; anything it throws is logged, since a throwing task would never run again. */
    private void check() {
        try {
            reloadIfChanged();
        } catch (Throwable t) {
            log.warn("TLS certificate check failed; will check again: {}", t.toString());
        }
    }

    /** Reloads if the files changed since the last load; returns whether a new certificate is served. */
    public synchronized boolean reloadIfChanged() {
        FileStamp now;
        try {
            now = stamp(config);
        } catch (IOException e) {
            // Mid-renewal a file may be missing for a moment; the next check sees it.
            log.debug("TLS files not readable now: {}", e.toString());
            return false;
        }
        if (now.equals(current.stamp()) || now.equals(failed)) {
            return false;
        }
        return reload();
    }

    /** Reloads now, whether or not the files changed; keeps the old certificate if the new one fails. */
    public synchronized boolean reload() {
        Loaded next;
        try {
            next = load(config, provider);
        } catch (IOException | CertificateException | RuntimeException e) {
            try {
                failed = stamp(config);
            } catch (IOException ignored) {
                failed = null;
            }
            log.warn("TLS certificate not reloaded, still serving the old one (expires {}): {}",
                    current.certificate().getNotAfter().toInstant(), e.getMessage());
            return false;
        }
        failed = null;
        current = next;
        log.info("TLS certificate reloaded: {} (expires {})", next.certificate().getSubjectX500Principal().getName(),
                next.certificate().getNotAfter().toInstant());
        return true;
    }

    /** Stops watching the files; live connections are unaffected. */
    @Override
    public void close() {
        poller.shutdownNow();
    }
}

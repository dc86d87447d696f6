package dev.crossbar.server.config;

import static java.util.Objects.requireNonNull;

import java.nio.file.Path;
import java.time.Duration;

/**
 * TLS settings: a PEM certificate chain and its PEM private key (PKCS#8), the provider, and how
 * often the files are checked for a renewed certificate. Off ({@link #DISABLED}) unless both files
 * are given.
 */
public final class TlsConfig {

    /** How often the certificate and key files' modification times are checked. */
    public static final Duration DEFAULT_RELOAD_INTERVAL = Duration.ofSeconds(5);
    public static final TlsProvider DEFAULT_PROVIDER = TlsProvider.AUTO;

    /** TLS off: plain ws:// and http://. */
    public static final TlsConfig DISABLED = new TlsConfig(null, null, DEFAULT_PROVIDER, DEFAULT_RELOAD_INTERVAL);

    private final Path certificate;
    private final Path privateKey;
    private final TlsProvider provider;
    private final Duration reloadInterval;

    private TlsConfig(Path certificate, Path privateKey, TlsProvider provider, Duration reloadInterval) {
        this.certificate = certificate;
        this.privateKey = privateKey;
        this.provider = provider;
        this.reloadInterval = reloadInterval;
    }

    /**
     * TLS with {@code certificate} (PEM chain, leaf first) and {@code privateKey} (PEM).
     *
     * @param reloadInterval how often to check the files for a change (> 0)
     */
    public static TlsConfig of(Path certificate, Path privateKey, TlsProvider provider, Duration reloadInterval) {
        requireNonNull(certificate, "certificate");
        requireNonNull(privateKey, "privateKey");
        requireNonNull(provider, "provider");
        requireNonNull(reloadInterval, "reloadInterval");
        if (reloadInterval.isZero() || reloadInterval.isNegative()) {
            throw new IllegalArgumentException("reloadInterval: " + reloadInterval + " (expected: > 0)");
        }
        return new TlsConfig(certificate, privateKey, provider, reloadInterval);
    }

    public static TlsConfig of(Path certificate, Path privateKey) {
        return of(certificate, privateKey, DEFAULT_PROVIDER, DEFAULT_RELOAD_INTERVAL);
    }

    public boolean enabled() {
        return certificate != null;
    }

    public Path certificate() {
        return certificate;
    }

    public Path privateKey() {
        return privateKey;
    }

    public TlsProvider provider() {
        return provider;
    }

    public Duration reloadInterval() {
        return reloadInterval;
    }

    @Override
    public String toString() {
        return enabled() ? "tls(" + certificate + ", " + provider.name().toLowerCase(java.util.Locale.ROOT) + ")" : "tls(off)";
    }
}

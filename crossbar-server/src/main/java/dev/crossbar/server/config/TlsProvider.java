package dev.crossbar.server.config;

/** Which TLS implementation serves connections. */
public enum TlsProvider {
    /** OpenSSL (BoringSSL via netty-tcnative) when its native library loads, else the JDK. */
    AUTO,
    /** OpenSSL only; start-up fails if it is not available on this platform. */
    OPENSSL,
    /** The JDK's own TLS (SSLEngine). */
    JDK;

    /** The name on the command line and in the configuration file. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}

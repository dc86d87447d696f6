/**
 * TLS: {@code wss://} and {@code https://} on the relay's one port, with a certificate that is
 * reloaded when its files change (or on SIGHUP) without dropping live connections. OpenSSL
 * (BoringSSL, through netty-tcnative) where available, the JDK's TLS otherwise.
 */
package dev.crossbar.server.tls;

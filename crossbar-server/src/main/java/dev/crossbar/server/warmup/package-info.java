/**
 * Before the relay opens its port: a relay of its own, on loopback, carrying a few seconds of
 * traffic through the same code, so that the JIT has compiled the hot path before the first
 * client arrives rather than in its first minutes.
 */
package dev.crossbar.server.warmup;

/**
 * The end-to-end load generator: many Netty WebSocket clients in one process driving a relay on
 * loopback through a scenario, checking every message it receives against what was sent, and
 * reporting speed, integrity and the relay's CPU and memory. Entry point: {@link dev.crossbar.bench.load.LoadMain}.
 */
package dev.crossbar.bench.load;

/**
 * Liveness that proves messages move: a probe sent through the relay's own fan-out to each event
 * loop, its latency exported, and {@code /healthz} answering 503 while a loop has stopped moving them.
 */
package dev.crossbar.server.health;

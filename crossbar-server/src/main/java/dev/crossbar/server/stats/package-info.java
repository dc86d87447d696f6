/**
 * Statistics for people: periodic snapshots of topics and connections, with rates measured
 * between snapshots (never on the message path), sent as JSON over the {@code /ws} socket and
 * shown by the {@code /stats} page.
 */
package dev.crossbar.server.stats;

/**
 * Statistics for people: periodic snapshots of topics and connections, with rates measured
 * between snapshots (never on the message path), sent as JSON over the {@code /ws} socket and
 * shown by the {@code /stats} page; with {@code --nats}, the cluster view merged from every node's
 * summary ({@link dev.crossbar.server.stats.PeerLink}). Client addresses and user agents are shown
 * truncated unless the reader may see them whole ({@link dev.crossbar.server.stats.ClientDetails}).
 * 1:1 sessions come from the part that keeps them, through {@link dev.crossbar.server.stats.SessionSource}:
 * counts, ages and traffic, never content.
 */
package dev.crossbar.server.stats;

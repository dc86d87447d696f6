/**
 * Fan-out: one message, framed once, written by each receiver's own event loop; the
 * {@link dev.crossbar.core.relay.Member} a receiver is to the fan-out, and receivers grouped by
 * loop. Knows nothing of topics: {@code topic} uses it.
 */
package dev.crossbar.core.relay;

/**
 * Several nodes joined through NATS: {@link dev.crossbar.server.cluster.NatsBroker} subscribes to a
 * topic's subject while the node has receivers on it, publishes each message once, and hands what
 * other nodes publish to the router's local fan-out. Subject mapping, the envelope on the wire,
 * chunking of large messages and loss accounting live here; so does the lossless link
 * ({@code LosslessLink}: outboxes, inboxes, acknowledgements and verdicts), which carries
 * {@code slow=backpressure} streams at least once and closes their clients with 4010 where a loss
 * cannot be made good. The wire format is in {@code docs/protocol.md} ("Several nodes").
 */
package dev.crossbar.server.cluster;

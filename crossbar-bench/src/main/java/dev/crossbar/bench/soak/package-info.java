/**
 * The cluster soak ({@link dev.crossbar.bench.soak.Soak}): an hour of a campus's mixed traffic across
 * two Crossbar nodes joined through a two-server NATS cluster, with a fault every few minutes, looking
 * for silent holes: a message missing at a client that no node counted and no close told it of.
 * Real processes throughout (the relay's fat jar, Debian's {@code nats-server}); senders on the JDK's
 * {@code java.net.http.WebSocket}, viewers on a plain-socket reader ({@link dev.crossbar.bench.soak.RawViewer},
 * which says why). {@link dev.crossbar.bench.soak.Storm} restarts one node under its clients, round after round.
 */
package dev.crossbar.bench.soak;

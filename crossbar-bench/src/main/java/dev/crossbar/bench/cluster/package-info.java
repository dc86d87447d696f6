/**
 * What the cluster link costs: {@link dev.crossbar.bench.cluster.LinkCost} runs two Crossbar nodes in
 * one JVM joined through a real {@code nats-server} and measures the CPU a message takes across them,
 * lossless ({@code slow=backpressure}) against ordinary.
 */
package dev.crossbar.bench.cluster;

/**
 * JMH microbenchmarks of the relay's hot path: one message through the real server pipeline and
 * sessions ({@code RelaySessionBenchmark}), the core's fan-out with stand-in members
 * ({@code FanoutBenchmark}), frame encoding, the per-connection statistics update and the video
 * random-access tracker. Run with {@code java -jar crossbar-bench/target/benchmarks.jar}.
 */
package dev.crossbar.bench.jmh;

/**
 * JMH microbenchmarks of the relay's hot path: fan-out through the real router, frame encoding and
 * the per-connection statistics update. Run with {@code java -jar crossbar-bench/target/benchmarks.jar}.
 */
package dev.crossbar.bench.jmh;

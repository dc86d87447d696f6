package dev.crossbar.bench.jmh;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Settings shared by every Crossbar microbenchmark (JMH's annotations are inherited): one fork
 * with leak detection off (its sampling would be measured, not the relay) and the relay's small
 * heap, short warm-up and measurement so the suite fits a few minutes, average time in ns.
 * Add {@code -prof gc} on the command line for allocation per operation (B/op).
 */
@Fork(value = 1, jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled", "-Xms256m", "-Xmx256m",
        "-XX:MaxDirectMemorySize=256m"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public abstract class AbstractBenchmark {
}

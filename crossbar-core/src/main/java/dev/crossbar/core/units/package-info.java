/**
 * Sizes and durations as operators write them ({@code 10MiB}, {@code 30s}): the one grammar of the
 * command line, the configuration file, stream rules and the benchmarks.
 */
package dev.crossbar.core.units;

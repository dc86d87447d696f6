/** A join storm: many members joining (and leaving) one topic at once, on real event loops. */
package dev.crossbar.bench.storm;

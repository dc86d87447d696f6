/** Statistics: counters kept on the hot path without locks, read by snapshots. */
package dev.crossbar.core.stats;

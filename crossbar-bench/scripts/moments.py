#!/usr/bin/env python3
"""What a latency tail is made of, from the load generator's traces (--latency-trace, or TRACE_DIR
with compare.sh): one line per 5 ms of receive time with deliveries, mean and slowest latency.

    python3 crossbar-bench/scripts/moments.py TRACE.tsv [...] [--until-ms 8000] [--timeline]

Per trace:
  spread p50/p90  the slowest delivery of a moment over that moment's mean (as the run's
                  momentSpreadP50/P90): high when receivers are served out of step
  mean p50/p90    the moments' mean latency: a high p90 against p50 means slow periods
  slow windows    100 ms windows whose mean latency is over 1.5x the run's median moment, and the
                  longest stretch of them: the whole relay slowed down, and for how long
With --timeline, also each 100 ms window's mean latency (ms) and deliveries (thousands).
A trace's first line gives the start of measurement on the monotonic clock (System.nanoTime,
Python's time.monotonic_ns), to lay it beside other recordings of the run.
"""
import argparse
import statistics


def read(path, until_ms):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith('#') or not line.strip():
                continue
            ms, n, mean_us, max_us = (int(x) for x in line.split())
            if ms < until_ms:
                rows.append((ms, n, mean_us, max_us))
    return rows


def quantile(values, q):
    values = sorted(values)
    return values[round(q * (len(values) - 1))]


def windows(rows, width_ms=100):
    sums = {}
    for ms, n, mean_us, _ in rows:
        w = sums.setdefault(ms // width_ms, [0, 0])
        w[0] += n
        w[1] += n * mean_us
    return [(k * width_ms, n, total / n) for k, (n, total) in sorted(sums.items()) if n > 0]


def measurement_start(path):
    """The start of measurement on the monotonic clock (ns), from the trace's first line, or None."""
    with open(path) as f:
        first = f.readline()
    return int(first.split()[3]) if first.startswith('# measurement from') else None


def slow_windows(rows, width_ms=100):
    """The windows of moments with 10 deliveries or more, which of them are slow (mean latency over
    1.5x the median moment's), and that median."""
    rows = [r for r in rows if r[1] >= 10]
    median = statistics.median(mean for _, _, mean, _ in rows)
    wins = windows(rows, width_ms)
    return wins, [mean > 1.5 * median for _, _, mean in wins], median


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('traces', nargs='+')
    ap.add_argument('--until-ms', type=int, default=8000,
                    help='moments from the start of measurement to keep (default 8000: an 8 s run, not its drain)')
    ap.add_argument('--timeline', action='store_true', help='print each 100 ms window too')
    args = ap.parse_args()
    print('%-40s %9s %12s %14s %20s' % ('trace', 'moments', 'spread p50/90', 'mean p50/90 ms', 'slow 100 ms windows'))
    for path in args.traces:
        rows = [r for r in read(path, args.until_ms) if r[1] >= 10]
        if not rows:
            print('%-40s no moment with 10 deliveries' % path)
            continue
        spread = [mx / mean for _, _, mean, mx in rows if mean > 0]
        means = [mean for _, _, mean, _ in rows]
        wins, slow, median = slow_windows(rows)
        longest = run = 0
        for s in slow:
            run = run + 1 if s else 0
            longest = max(longest, run)
        print('%-40s %9d %5.2f / %4.2f %6.1f / %5.1f %6d of %d, longest %d ms' % (
            path, len(rows), quantile(spread, 0.5), quantile(spread, 0.9), median / 1000,
            quantile(means, 0.9) / 1000, sum(slow), len(wins), longest * 100))
        if args.timeline:
            for i in range(0, len(wins), 20):
                part = wins[i:i + 20]
                print('   ms %5d  mean ms: %s' % (part[0][0], ' '.join('%4.1f' % (m / 1000) for _, _, m in part)))
                print('   %8s  k msgs:  %s' % ('', ' '.join('%4d' % (n // 1000) for _, n, _ in part)))


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""What a relay did in the slow 100 ms windows of a latency trace, against the other windows.

A slow window is as moments.py counts it (and by its code): its mean latency over 1.5x the
run's median moment. The
recording is laid beside the trace on the monotonic clock (the trace's first line gives the start
of measurement on it). Three kinds of recording:

  slow-windows.py TRACE.tsv jfr PROFILE.jfr OFFSET [THREAD_PREFIX]
      async-profiler's JFR output (event=itimer): CPU samples per window, and the share of samples
      per method (leaf and inclusive). OFFSET is a file holding wall-clock minus monotonic ns,
      written when the relay started: python3 -c 'import time;print(time.time_ns()-time.monotonic_ns())'
  slow-windows.py TRACE.tsv perfstat COUNTS.csv START
      perf stat -I 100 -x, -p PID -e context-switches,syscalls:sys_enter_writev,... : system calls
      per 1000 deliveries. START is a file holding time.monotonic_ns() when perf started.
  slow-windows.py TRACE.tsv perfscript SCRIPT.txt
      perf record -k mono -e cpu-clock -g -p PID, then perf script -F tid,time,ip,sym: samples per
      1000 deliveries per function (kernel ones included) of the thread that writes the most.

Deliveries per window come from the trace; a function that costs more per delivery in slow
windows, at the same share, means everything ran slower, not that the relay did something else.
"""
import collections
import datetime
import json
import statistics
import subprocess
import sys

import moments

WIDTH_MS = 100
UNTIL_MS = 8000


def read_trace(path):
    """The start of measurement, deliveries per window, the slow windows (moments.py's), the median."""
    start = moments.measurement_start(path)
    if start is None:
        sys.exit(path + ': no "# measurement from" line (a trace from before 6b112e4)')
    rows = moments.read(path, UNTIL_MS)
    wins, slow, median = moments.slow_windows(rows, WIDTH_MS)
    deliveries = {ms // WIDTH_MS: n for ms, n, _ in moments.windows(rows, WIDTH_MS)}
    return start, deliveries, {ms // WIDTH_MS for (ms, _, _), s in zip(wins, slow) if s}, median


def window(mono_ns, start):
    ms = (mono_ns - start) / 1e6
    return int(ms // WIDTH_MS) if 0 <= ms < UNTIL_MS else None


def epoch_ns(iso):
    """JFR's startTime, e.g. 2026-11-27T02:10:01.123456789Z, as ns since the epoch."""
    iso = iso.replace('Z', '+00:00')
    whole, rest = iso[:19], iso[19:]
    frac, tz = (rest.split('+', 1) + [''])[:2] if '+' in rest else (rest, '00:00')
    nanos = int((frac.lstrip('.') + '000000000')[:9]) if frac.startswith('.') else 0
    return int(datetime.datetime.fromisoformat(whole + '+' + tz).timestamp()) * 10**9 + nanos


def jfr_samples(path, offset_file, prefix):
    offset = int(open(offset_file).read())
    out = subprocess.run(['jfr', 'print', '--json', '--events', 'jdk.ExecutionSample', path],
                         capture_output=True, text=True, check=True).stdout
    for e in json.loads(out)['recording']['events']:
        v = e['values']
        thread = v.get('sampledThread') or {}
        name = thread.get('javaName') or thread.get('osName') or '?'
        if not name.startswith(prefix):
            continue
        frames = []
        for f in (v.get('stackTrace') or {}).get('frames') or []:
            m = f.get('method') or {}
            frames.append(((m.get('type') or {}).get('name') or '').rsplit('/', 1)[-1] + '.' + (m.get('name') or '?'))
        yield epoch_ns(v['startTime']) - offset, frames


def perfscript_samples(path):
    samples, current = [], None
    for line in open(path):
        if not line.strip():
            if current:
                samples.append(current)
            current = None
        elif line[0] not in ' \t':
            tid, t = line.split()[:2]
            current = (int(tid), float(t.rstrip(':')), [])
        elif current is not None:
            parts = line.split(None, 1)
            current[2].append(parts[1].strip() if len(parts) > 1 else parts[0])
    if current:
        samples.append(current)
    writers = collections.Counter(s[0] for s in samples if any('do_writev' in f for f in s[2]))
    loop = writers.most_common(1)[0][0]
    return [(int(t * 1e9), frames) for tid, t, frames in samples if tid == loop]


def compare_samples(samples, start, deliveries, slow):
    count = {'slow': 0, 'other': 0}
    leaf = {'slow': collections.Counter(), 'other': collections.Counter()}
    inclusive = {'slow': collections.Counter(), 'other': collections.Counter()}
    per_window = collections.Counter()
    for mono, frames in samples:
        k = window(mono, start)
        if k is None or k not in deliveries:
            continue
        kind = 'slow' if k in slow else 'other'
        count[kind] += 1
        per_window[k] += 1
        if frames:
            leaf[kind][frames[0]] += 1
        for f in set(frames):
            inclusive[kind][f] += 1
    other = [k for k in deliveries if k not in slow]
    mean = lambda keys, f: statistics.mean([f(k) for k in keys]) if keys else 0
    print('samples per window: slow %.1f, other %.1f' % (mean(slow, per_window.__getitem__), mean(other, per_window.__getitem__)))
    thousands = {'slow': sum(deliveries[k] for k in slow) / 1000 or 1, 'other': sum(deliveries[k] for k in other) / 1000}
    for title, table in (('leaf', leaf), ('inclusive', inclusive)):
        print('-- %s: samples per 1000 deliveries, slow / other; share of samples, slow / other' % title)
        names = {n for kind in table for n, _ in table[kind].most_common(25)}
        per = lambda n, kind: table[kind][n] / thousands[kind]
        for n in sorted(names, key=lambda n: per(n, 'other') - per(n, 'slow'))[:25]:
            print('  %7.3f %7.3f   %5.1f%% %5.1f%%  %s' % (per(n, 'slow'), per(n, 'other'),
                  100 * table['slow'][n] / max(1, count['slow']), 100 * table['other'][n] / max(1, count['other']), n[:90]))


def compare_counts(path, start_file, start, deliveries, slow):
    perf_start = int(open(start_file).read())
    counts = collections.defaultdict(collections.Counter)
    for line in open(path):
        fields = line.strip().split(',')
        if line.startswith('#') or len(fields) < 4 or not fields[1][:1].isdigit():
            continue
        # Each line counts the 100 ms that end at its time.
        k = window(perf_start + float(fields[0]) * 1e9 - WIDTH_MS * 1e6 / 2, start)
        if k is not None:
            counts[k][fields[3].replace('syscalls:sys_enter_', '')] += int(fields[1])
    for kind, keys in (('slow', [k for k in deliveries if k in slow and k in counts]),
                       ('other', [k for k in deliveries if k not in slow and k in counts])):
        if not keys:
            print('%-5s no window' % kind)
            continue
        d = sum(deliveries[k] for k in keys)
        total = collections.Counter()
        for k in keys:
            total.update(counts[k])
        print('%-5s %2d windows, %6.0f deliveries each; per 1000 deliveries: %s' % (
            kind, len(keys), d / len(keys), '  '.join('%s %.1f' % (e, 1000 * c / d) for e, c in sorted(total.items()) if c)))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    trace, kind, path = sys.argv[1:4]
    start, deliveries, slow, median = read_trace(trace)
    print('%s: %d windows, %d slow (median latency %.1f ms); deliveries per window: slow %.0f, other %.0f' % (
        trace, len(deliveries), len(slow), median / 1000,
        statistics.mean([deliveries[k] for k in slow]) if slow else 0,
        statistics.mean([deliveries[k] for k in deliveries if k not in slow])))
    if kind == 'jfr':
        compare_samples(jfr_samples(path, sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else ''), start, deliveries, slow)
    elif kind == 'perfstat':
        compare_counts(path, sys.argv[4], start, deliveries, slow)
    elif kind == 'perfscript':
        compare_samples(perfscript_samples(path), start, deliveries, slow)
    else:
        sys.exit('kind: ' + kind + ' (expected: jfr, perfstat or perfscript)')


if __name__ == '__main__':
    main()

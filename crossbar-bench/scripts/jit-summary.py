#!/usr/bin/env python3
"""Summarise a HotSpot -XX:+LogCompilation file from a point in time on (the relay's port opening).

    jit-summary.py LOG.xml [FROM_SECONDS]

Prints one line: the uncommon traps (and how many of them threw compiled code away: actions
reinterpret and make_not_entrant), those in the event loop's read path (epollInReady,
EpollIoHandler.run, the epoll unsafe's handle), when those loop methods were compiled by C2
again, when LoopQueue.drainRun was compiled by C2 (at any time), and the C2 compilations begun
after FROM_SECONDS with their total time; then the five longest of those. The last second of the
log (the relay stopping) is left out.
"""
import re
import sys

LOOP = ('epollInReady', 'EpollIoHandler run', 'AbstractEpollUnsafe handle')


def stamp(attrs):
    return float(re.search(r"stamp='([\d.]+)'", attrs).group(1))


def main():
    path = sys.argv[1]
    start = float(sys.argv[2]) if len(sys.argv) > 2 else 4.2
    log = open(path, errors='replace').read()
    methods = {}
    for m in re.finditer(r"<(?:task_queued|nmethod|task) compile_id='(\d+)'[^>]*?method='([^']*)'", log):
        methods.setdefault(m.group(1), m.group(2))
    end = max(float(s) for s in re.findall(r"stamp='([\d.]+)'", log)) - 1.0

    traps = discarded = in_loop = 0
    for m in re.finditer(r"<uncommon_trap thread='\d+' ([^>]*)>", log):
        attrs = m.group(1)
        if not start <= stamp(attrs) < end:
            continue
        traps += 1
        if re.search(r"action='(reinterpret|make_not_entrant)'", attrs):
            discarded += 1
        method = methods.get(re.search(r"compile_id='(\d+)'", attrs).group(1), '')
        if any(k in method for k in LOOP):
            in_loop += 1

    c2 = []  # C2 tasks carry no level attribute
    for m in re.finditer(r"<task (?![^>]*level=)([^>]*)>.*?<task_done ([^>]*)>", log, re.S):
        c2.append((stamp(m.group(1)), stamp(m.group(2)) - stamp(m.group(1)),
                   re.search(r"method='([^']*)'", m.group(1)).group(1)))
    late = [c for c in c2 if start <= c[0] < end]
    loop_again = [round(t, 1) for t, _, m in late if any(k in m for k in LOOP)]
    runs = [round(t, 1) for t, _, m in c2 if 'LoopQueue drainRun' in m]
    print(f"traps {traps} (threw code away {discarded}), in the read path {in_loop}; "
          f"loop methods compiled again at {loop_again}; drainRun by C2 at {runs}; "
          f"C2 compilations after {start} s: {len(late)}, {sum(d for _, d, _ in late):.3f} s")
    for t, d, m in sorted(late, key=lambda c: -c[1])[:5]:
        print(f"  {d:.3f} s at {t:.2f} s  {m[:100]}")


if __name__ == '__main__':
    main()

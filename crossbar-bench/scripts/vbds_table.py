#!/usr/bin/env python3
"""VBDS's two tables with Crossbar's figures beside them, from vbds.sh's JSON lines.

    python3 crossbar-bench/scripts/vbds_table.py RESULTS.jsonl

Runs are grouped by case (the run's topic: file-75MB, img4-512, ...) and mode (the run's "slow":
backpressure is lossless, drop the relay's default); each figure is the median of the group's runs,
losses are summed over them. Figures:

  files/s, img/s  distinct messages delivered per second per subscriber (mean of the two), divided
                  by the messages in a file (75, 640, 1,024 of 1 MiB); a file of the drop column
                  may be missing pieces: see "lost"
  mean/p99 ms     publisher -> subscriber latency of the messages sent in the measured window: in
                  the image table under a saturated stream (queues full), in the latency table of
                  one image at a time (lat4-W cases)
  lost            messages of the whole run (warm-up included) a subscriber never got, of those
                  expected (sent x 2); merged/split/corrupt/reordered/duplicated messages are
                  counted as "bad" (nothing is expected there in either mode)
  CPU s/GB        the relay's CPU time (utime+stime, all threads) per GB delivered to subscribers
  RSS MB          the relay's peak resident memory
"""
import json
import statistics
import sys
from collections import defaultdict

# VBDS's published figures: one publisher, two subscribers, two hosts on 10 GbE.
VBDS_FILES = {"75MB": 3.34, "640MB": 0.417, "1GB": 0.267}
VBDS_IMG = {(2, 48): 271, (2, 4096): 5.3, (4, 48): 211, (4, 4096): 2.4}
VBDS_LATENCY_MS = {(4, 512): 14, (4, 2048): 124}
FILE_CHUNKS = {"75MB": 75, "640MB": 640, "1GB": 1024}
MODES = ("backpressure", "drop")
BAD = ("mergedFrames", "corrupt", "reordered", "duplicates")


def load(paths):
    groups = defaultdict(list)
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                r = json.loads(line)
                if r.get("kind") == "run" and r.get("slow") in MODES:
                    groups[(r["topic"], r["slow"])].append(r)
    return groups


def med(runs, key, scale=1.0):
    vals = [r[key] * scale for r in runs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def fmt(v, digits=None):
    if v is None:
        return "—"
    if digits is None:
        digits = 3 if abs(v) < 1 else 2 if abs(v) < 10 else 1 if abs(v) < 100 else 0
    return f"{v:,.{digits}f}"


def loss(runs):
    if not runs:
        return "—"
    lost = sum(r.get("lost", 0) for r in runs)
    expected = sum(r.get("expected", 0) for r in runs)
    bad = sum(r.get(k, 0) or 0 for r in runs for k in BAD)
    s = f"{lost:,}/{expected:,}"
    if expected:
        s += f" ({100.0 * lost / expected:.2g}%)"
    if bad:
        s += f", {bad:,} bad"
    return s


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    g = load(argv[1:])
    n = {k: len(v) for k, v in g.items()}
    print("### Files (1 MiB messages, 1 publisher, 2 subscribers)\n")
    print("| file | VBDS files/s | lossless files/s | drop files/s | lossless lost | drop lost "
          "| CPU s/GB lossless / drop | RSS MB lossless / drop | runs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in ("75MB", "640MB", "1GB"):
        case = f"file-{name}"
        bp, dr = g.get((case, "backpressure"), []), g.get((case, "drop"), [])
        if not bp and not dr:
            continue
        fps = lambda runs: med(runs, "perReceiverMsgPerS", 1.0 / FILE_CHUNKS[name])
        print(f"| {name} | {VBDS_FILES[name]} | {fmt(fps(bp))} | {fmt(fps(dr))} | {loss(bp)} | {loss(dr)} "
              f"| {fmt(med(bp, 'cpuSPerGB'))} / {fmt(med(dr, 'cpuSPerGB'))} "
              f"| {fmt(med(bp, 'relayPeakRssMB'), 0)} / {fmt(med(dr, 'relayPeakRssMB'), 0)} "
              f"| {len(bp)} / {len(dr)} |")
    print("\n### Images (as fast as the publisher's socket takes; each one message, 1 publisher, 2 subscribers; 4 B/px with a 16 KiB header)\n")
    print("| image | B/px | bytes | VBDS img/s | lossless img/s | drop img/s "
          "| lossless mean / p99 ms | drop mean / p99 ms | lossless lost | drop lost "
          "| CPU s/GB lossless / drop | RSS MB lossless / drop | runs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    cases = sorted({k[0] for k in g if k[0].startswith("img")},
                   key=lambda c: (int(c[3]), int(c.split("-")[1])))
    for case in cases:
        bpp, side = int(case[3]), int(case.split("-")[1])
        bp, dr = g.get((case, "backpressure"), []), g.get((case, "drop"), [])
        size = (bp or dr)[0]["size"]
        lat = lambda runs: f"{fmt(med(runs, 'meanUs', 1e-3))} / {fmt(med(runs, 'p99Us', 1e-3))}"
        print(f"| {side}x{side} | {bpp} | {size:,} | {fmt(VBDS_IMG.get((bpp, side)))} "
              f"| {fmt(med(bp, 'perReceiverMsgPerS'))} | {fmt(med(dr, 'perReceiverMsgPerS'))} "
              f"| {lat(bp)} | {lat(dr)} | {loss(bp)} | {loss(dr)} "
              f"| {fmt(med(bp, 'cpuSPerGB'))} / {fmt(med(dr, 'cpuSPerGB'))} "
              f"| {fmt(med(bp, 'relayPeakRssMB'), 0)} / {fmt(med(dr, 'relayPeakRssMB'), 0)} "
              f"| {len(bp)} / {len(dr)} |")
    lat = sorted({k[0] for k in g if k[0].startswith("lat")}, key=lambda c: int(c.split("-")[1]))
    if lat:
        print("\n### Latency of one image at a time (one in flight: the next is sent when both subscribers have it)\n")
        print("| image | B/px | bytes | VBDS mean ms | lossless mean / p99 ms | drop mean / p99 ms "
              "| lossless lost | drop lost | runs |")
        print("|---|---|---|---|---|---|---|---|---|")
        for case in lat:
            bpp, side = int(case[3]), int(case.split("-")[1])
            bp, dr = g.get((case, "backpressure"), []), g.get((case, "drop"), [])
            size = (bp or dr)[0]["size"]
            lt = lambda runs: f"{fmt(med(runs, 'meanUs', 1e-3))} / {fmt(med(runs, 'p99Us', 1e-3))}"
            print(f"| {side}x{side} | {bpp} | {size:,} | {fmt(VBDS_LATENCY_MS.get((bpp, side)))} "
                  f"| {lt(bp)} | {lt(dr)} | {loss(bp)} | {loss(dr)} | {len(bp)} / {len(dr)} |")
    print("\nFigures: medians of the runs (lossless = --route '/**:slow=backpressure', drop = the default); "
          "lost: messages never delivered / expected, summed over the runs. "
          "VBDS: two hosts on 10 GbE; ours: one host, loopback, relay and load generator sharing its cores.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

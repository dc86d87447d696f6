#!/usr/bin/env python3
"""Plots and tables from the load generator's JSON lines (see docs/benchmarks.md).

    python3 crossbar-bench/scripts/plot.py RESULTS.jsonl [...] [--out docs/img] [--table]

Runs are grouped by relay label and configuration (scenario, size, receivers, rate, window, and
the write batch and relay session, so runs made before those were recorded stay apart);
each figure is the median of the group's runs, with the range (min-max) in the table. Writes
  latency-vs-subscribers.png  fanout at 30 msg/s: p50 and p99 latency against subscribers
  throughput-vs-size.png      one sender, one receiver: delivered Mbit/s against message size,
                              with the iperf3 loopback ceiling of the same session
and with --table prints a Markdown comparison table.
Needs matplotlib (pip install matplotlib).
"""
import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def load(paths):
    runs, iperf = [], []
    for p in paths:
        for line in Path(p).read_text().splitlines():
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r.get("kind") == "run":
                runs.append(r)
            elif r.get("kind") == "iperf3":
                iperf.append(r["gbitS"])
    return runs, iperf


def key(r):
    n = r.get("receivers", r.get("clients", r.get("connections")))
    return (r["scenario"], r.get("size"), n, r.get("rate"), r.get("window"), r.get("batch"), r.get("spawnSession"))


def groups(runs):
    g = defaultdict(lambda: defaultdict(list))
    for r in runs:
        g[key(r)][r["label"]].append(r)
    return g


def med(rs, field):
    vals = [r[field] for r in rs if r.get(field) is not None]
    return statistics.median(vals) if vals else None


def rng(rs, field):
    vals = [r[field] for r in rs if r.get(field) is not None]
    return (min(vals), max(vals)) if vals else None


def fmt(v, digits=0):
    if v is None:
        return "-"
    if isinstance(v, float) and digits == 0 and abs(v) < 10 and v != int(v):
        return f"{v:.2f}"
    return f"{v:,.{digits}f}"


def describe(k):
    scenario, size, n, rate, window, batch, session = k
    how = (f", {batch} frames per write" if batch and batch > 1 else "") + (
        ", relay a child of the generator" if session == "inherit" else "")
    if scenario == "idle":
        return f"idle, {n:,} connections{how}"
    sz = f"{size // 1048576} MiB" if size and size >= 1048576 and size % 1048576 == 0 else (
        f"{size // 1024} KiB" if size and size % 1024 == 0 and size >= 1024 else f"{size} B")
    pace = "as fast as possible" if not rate else f"{rate:g} msg/s"
    who = {"pingpong": "1→1", "large": "1→1", "fanout": f"1→{n}", "slow": f"1→{n} + 1 stalled",
           "mesh": f"{n}↔{n}"}.get(scenario, str(n))
    w = f", window {window}" if window else ""
    return f"{scenario} {sz}, {who}, {pace}{w}{how}"


def table(g, labels):
    out = ["| scenario | relay | runs | msg/s delivered (range) | Mbit/s | p50 µs | p99 µs | p99.9 µs | lost | merged frames | relay CPU-s/GB | relay CPU-s/M msgs | peak RSS MB | notes |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for k in sorted(g, key=lambda k: (k[0], k[1] or 0, k[2] or 0, k[3] or 0, k[4] or 0, k[5] or 0, k[6] or "")):
        for label in labels:
            rs = g[k].get(label)
            if not rs:
                continue
            notes = []
            if k[0] == "idle":
                notes.append(f"RSS {fmt(med(rs, 'relayRssMB'), 1)} MB, {fmt(med(rs, 'rssPerConnKB'), 1)} KB/conn")
                if med(rs, "heapPerConnB") is not None:
                    notes.append(f"heap {fmt(med(rs, 'heapPerConnB'))} B/conn")
                notes.append(f"connect {fmt(med(rs, 'connectS'), 1)} s")
            stall = med(rs, "stalledS")
            if stall is not None and stall > 1:
                notes.append(f"stalled {stall:.1f} s before the end")
            if k[0] == "slow" and med(rs, "slowReceived") is not None:
                notes.append(f"stalled reader got {fmt(med(rs, 'slowReceived'))}")
            if (med(rs, "corrupt") or 0) > 0 or (med(rs, "reordered") or 0) > 0:
                notes.append(f"corrupt {fmt(med(rs, 'corrupt'))}, reordered {fmt(med(rs, 'reordered'))}")
            r = rng(rs, "msgPerS")
            msgs = "-" if r is None else f"{fmt(med(rs, 'msgPerS'))} ({fmt(r[0])}–{fmt(r[1])})"
            lost = med(rs, "lost")
            loss_pct = med(rs, "lossPct")
            lost_s = "-" if lost is None else (fmt(lost) + (f" ({loss_pct:.2g}%)" if loss_pct else ""))
            merged = med(rs, "mergedFrames")
            merged_msgs = med(rs, "mergedMessages")
            merged_s = "-" if merged is None else (
                fmt(merged) + (f" ({fmt(merged_msgs)} msgs)" if merged else ""))
            out.append("| " + " | ".join([
                describe(k), label, str(len(rs)), msgs, fmt(med(rs, "egressMbitS")),
                fmt(med(rs, "p50Us")), fmt(med(rs, "p99Us")), fmt(med(rs, "p999Us")),
                lost_s, merged_s, fmt(med(rs, "cpuSPerGB"), 2), fmt(med(rs, "cpuSPerMillionMsgs"), 2),
                fmt(med(rs, "relayPeakRssMB")), "; ".join(notes)]) + " |")
    return "\n".join(out)


def plots(g, labels, iperf, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    colours = {label: c for label, c in zip(labels, ["tab:blue", "tab:orange", "tab:green", "tab:red"])}

    # Latency against subscribers: video-like fan-out (paced, 30 msg/s).
    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = False
    for label in labels:
        pts = sorted((k[2], med(g[k][label], "p50Us"), med(g[k][label], "p99Us"))
                     for k in g if k[0] == "fanout" and k[3] == 30 and label in g[k])
        pts = [p for p in pts if p[1] is not None]
        if not pts:
            continue
        drawn = True
        n = [p[0] for p in pts]
        ax.plot(n, [p[2] / 1000 for p in pts], "o-", color=colours[label], label=f"{label} p99")
        ax.plot(n, [p[1] / 1000 for p in pts], "s--", color=colours[label], label=f"{label} p50")
    if drawn:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("subscribers (4,600 B at 30 msg/s each)")
        ax.set_ylabel("latency, ms (median of runs)")
        ax.set_title("Fan-out latency against subscribers")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out_dir / "latency-vs-subscribers.png", dpi=110)
    plt.close(fig)

    # Throughput against message size: one sender, one receiver, as fast as the window allows.
    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = False
    for label in labels:
        best = {}
        for k in g:
            # Loss-free runs only: a window that makes a relay drop messages is not its throughput.
            if k[0] in ("pingpong", "large") and not k[3] and label in g[k] and not med(g[k][label], "lost"):
                v = med(g[k][label], "egressMbitS")
                if v is not None and (k[1] not in best or v > best[k[1]]):
                    best[k[1]] = v
        if not best:
            continue
        drawn = True
        sizes = sorted(best)
        ax.plot(sizes, [best[s] / 1000 for s in sizes], "o-", color=colours[label], label=label)
    if drawn:
        if iperf:
            ceiling = statistics.median(iperf)
            ax.axhline(ceiling, color="grey", linestyle=":", label=f"iperf3 loopback {ceiling:.1f} Gbit/s")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size, bytes")
        ax.set_ylabel("delivered payload, Gbit/s (median of runs)")
        ax.set_title("Throughput against message size (1 sender → 1 receiver)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out_dir / "throughput-vs-size.png", dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--out", default="docs/img")
    ap.add_argument("--table", action="store_true", help="print the Markdown comparison table")
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args()
    runs, iperf = load(args.results)
    if not runs:
        sys.exit("no runs in " + ", ".join(args.results))
    labels = list(dict.fromkeys(r["label"] for r in runs))
    g = groups(runs)
    if args.table:
        if iperf:
            print(f"iperf3 loopback: median {statistics.median(iperf):.2f} Gbit/s over {len(iperf)} runs "
                  f"({min(iperf):.2f}–{max(iperf):.2f})\n")
        print(table(g, labels))
    if not args.no_plots:
        plots(g, labels, iperf, Path(args.out))


if __name__ == "__main__":
    main()

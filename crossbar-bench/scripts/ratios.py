#!/usr/bin/env python3
"""Crossbar against the peer relays: medians per relay and the ratios to the peers.

    python3 crossbar-bench/scripts/ratios.py RESULTS.jsonl [...] [--peer tokio,uws] [--of crossbar]
                                             [--placement near|far|mixed] [--far-ns 150]
                                             [--markdown] [--plot docs/img/ratios.png]

Reads the load generator's JSON lines (crossbar-bench/scripts/compare.sh writes them). Runs are
grouped by scenario (the run's topic name, e.g. pingpong-64-w64) and configuration (scenario,
size, receivers, groups, rate, window, batch, session), so runs with different write batches or
sessions never mix. For each group it prints every relay's median of its runs, and the ratio of
each relay to each peer (--peer, in order: tokio, the best of the multi-threaded peers, and uws,
uWebSockets on one thread; a peer is compared with the peers after it, not those before), for:

  msg/s      distinct messages delivered per second, summed over receivers   (higher is better)
  Mbit/s     their payload                                                     (higher is better)
  p99 µs     latency of messages sent in the measurement window               (lower is better)
  spread     per 5 ms of arrivals, the slowest delivery over that moment's mean: receivers served
             out of step raise it (momentSpreadP50; scripts/moments.py reads the traces)
  CPU µs/msg relay CPU time per message delivered (= CPU-s per million)       (lower is better)
  no JIT µs/msg  the same without the relay's JIT compiler threads: a fresh JVM compiling its hot
             code, a one-off that lands in a short run's window (= CPU µs/msg for other relays)
  RSS MB     the relay's peak resident memory during the run                  (lower is better)
  1st ms     cold start: from the first client's connect to the first message relayed on a
             fresh relay (firstRelayMs; the load generator's own share is in every relay's, and
             about all of uws')
  p99 10s    p99 of the messages sent in the first 10 s measured (with WARMUP=0: a cold relay's)
  lost, merged   counts (medians); shown side by side, a ratio only when both are non-zero

A run of several parts (mixed: video, data, file) adds one group per part, named
"<scenario> [<part>]", with the part's msg/s, p99, latency of the first 10 s, lost and merged
(CPU and memory are the relay's, for the whole run only). Its relay rows say which stream rule
the relay ran (mixed's file transfer is lossless under Crossbar's slow=backpressure; the peers have
no such rule and run the same path as they are).

Placement: compare.sh samples once a second through each run how far apart the machine's two
CPUs are (scripts/cpu-distance.c); a run is near when fewer than a fifth of its samples are above
--far-ns, far when more than four fifths are, else mixed. The "placed" column counts each relay's
runs near/far/mixed; --placement keeps runs of one placement, so that a ratio does not compare one
relay's near runs with another's far ones.

A ratio above 1 is "more" whatever the direction; the "better" lines name, per figure and peer,
the relay the ratio favours when it is at least 5 % from 1. With --plot, draws each relay's ratios
to the peers per scenario and figure on a log scale (needs matplotlib: pip install matplotlib).
"""
import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

# (field, title, higher is better)
METRICS = [
    ("msgPerS", "msg/s", True),
    ("egressMbitS", "Mbit/s", True),
    ("p99Us", "p99 µs", False),
    ("momentSpreadP50", "spread", False),
    ("cpuSPerMillionMsgs", "CPU µs/msg", False),
    ("cpuSPerMillionMsgsNoJit", "no JIT µs/msg", False),
    ("relayPeakRssMB", "RSS MB", False),
    ("firstRelayMs", "1st ms", False),
    ("p99First10sUs", "p99 10s", False),
]
COUNTS = [("lost", "lost"), ("mergedFrames", "merged")]
# Ratios closer to 1 than this are not called for either relay (runs vary more than that).
SAME = 0.05
PLOTTED = ["msgPerS", "p99Us", "cpuSPerMillionMsgs", "relayPeakRssMB"]
# A part's figures, copied from "<part>.<field>" onto a run of its own.
PART_FIELDS = ["msgPerS", "p99Us", "p999Us", "p50Us", "p99First10sUs", "lost", "mergedFrames", "sent", "expected"]


def parts(r):
    """The runs a run of several parts stands for, one per part ("video.p99Us" -> p99Us)."""
    names = list(dict.fromkeys(k.split(".", 1)[0] for k in r if "." in k))
    out = []
    for name in names:
        p = {k: v for k, v in r.items() if k in CONFIG_KEYS}
        p["topic"] = f'{r.get("topic", r["scenario"])} [{name}]'
        p["part"] = name
        for f in PART_FIELDS:
            if f"{name}.{f}" in r:
                p[f] = r[f"{name}.{f}"]
        out.append(p)
    return out


CONFIG_KEYS = {"kind", "label", "scenario", "size", "receivers", "clients", "connections", "groups", "dataTopics",
               "stalled", "rate", "window", "batch", "spawnSession", "slow", "cpuDistanceNs", "time"}


def load(paths):
    """The runs, each with its CPU-distance samples (cpuDistanceNs) where compare.sh took them."""
    runs = []
    for p in paths:
        last = None
        for line in Path(p).read_text().splitlines():
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r.get("kind") == "cpuDistance" and last is not None:
                # Sampled through the run just written (a single figure: one probe just after it).
                last["cpuDistanceNs"] = r["ns"] if isinstance(r["ns"], list) else [r["ns"]]
                last = None
            elif r.get("kind") == "run":
                runs.append(r)
                last = r
    # Parts after the runs: by then each run has its CPU-distance samples to pass on.
    return runs + [p for r in runs for p in parts(r)]


def placement(r, far_ns):
    """near, far or mixed (at least a fifth of the run's samples on the other side), None unknown."""
    ns = r.get("cpuDistanceNs")
    if not ns:
        return None
    far = sum(x > far_ns for x in ns) / len(ns)
    return "near" if far < 0.2 else "far" if far > 0.8 else "mixed"


def placed(runs, wanted, far_ns):
    return runs if wanted is None else [r for r in runs if placement(r, far_ns) == wanted]


def config(r):
    n = r.get("receivers", r.get("clients", r.get("connections")))
    return (r["scenario"], r.get("size"), n, r.get("rate"), r.get("window"), r.get("batch"), r.get("spawnSession"),
            r.get("groups"), r.get("dataTopics"), r.get("stalled"), r.get("part"))


def group(runs):
    """{(name, config): {label: [runs]}}, in the order the scenarios first appear."""
    g = defaultdict(lambda: defaultdict(list))
    for r in runs:
        g[(r.get("topic", r["scenario"]), config(r))][r["label"]].append(r)
    return g


def median(rs, field):
    vals = [r[field] for r in rs if r.get(field) is not None]
    return statistics.median(vals) if vals else None


def fmt(v):
    if v is None:
        return "-"
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v):,}"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def describe(cfg):
    scenario, size, n, rate, window, batch, session, groups, data_topics, stalled, part = cfg
    if scenario == "idle":
        what = f"idle, {n:,} connections"
    elif scenario in ("streams", "topics", "mixed"):
        who = f"{n} clients each" if scenario == "topics" else f"{n} viewers each"
        what = f"{scenario}: {groups:,} {'topics' if scenario == 'topics' else 'streams'} of {who}, {rate:g} x {size:,} B/s"
        if scenario == "mixed":
            what += f"; {data_topics:,} data topics; a file transfer; {stalled} stalled reader(s)"
        if part:
            what += f"; part {part}"
    else:
        sz = (f"{size // 1048576} MiB" if size >= 1048576 and size % 1048576 == 0
              else f"{size:,} B")
        pace = "as fast as possible" if not rate else f"{rate:g} msg/s"
        win = f", window {window}" if window else ""
        what = f"{scenario} {sz} to {n:,}, {pace}{win}"
    how = []
    if batch is not None:
        how.append("one frame per write" if batch == 1 else f"{batch} frames per flush")
    elif scenario != "idle":
        how.append("batch not recorded (before: 256 frames per flush)")
    how.append(f"session {session}" if session else "session not recorded (before: a child)")
    return f"{what}; {', '.join(how)}"


def summarise(g, of, peers, markdown, far_ns):
    """Prints the tables; returns {name: {"label/peer": {field: ratio}}} for plotting."""
    ratios = {}
    for (name, cfg), by_label in g.items():
        first = [l for l in [of] + peers if l in by_label]
        labels = first + sorted(l for l in by_label if l not in first)
        print(f"\n## {name}: {describe(cfg)}\n" if markdown else f"\n{name}: {describe(cfg)}")
        head = ["relay", "runs", "placed"] + [t for _, t, _ in METRICS] + [t for _, t in COUNTS]
        rows = []
        for label in labels:
            rs = by_label[label]
            places = [placement(r, far_ns) for r in rs]
            placed_ = "/".join(str(places.count(p)) for p in ("near", "far", "mixed")) if any(places) else "-"
            rules = sorted({r["slow"] for r in rs if r.get("slow")})
            shown = label + (f" (slow={'/'.join(rules)})" if rules else "")
            rows.append([shown, str(len(rs)), placed_] + [fmt(median(rs, f)) for f, _, _ in METRICS]
                        + [fmt(median(rs, f)) for f, _ in COUNTS])
        ratios[name] = {}
        present = [p for p in peers if p in by_label]
        for i, peer in enumerate(present):
            base = by_label[peer]
            for label in labels:
                if label == peer or label in present[:i]:
                    continue
                rs = by_label[label]
                cells, rs_ratios = [], {}
                for f, _, higher in METRICS:
                    q = ratio(median(rs, f), median(base, f))
                    rs_ratios[f] = q
                    cells.append("-" if q is None else f"{q:.2f}x")
                for f, _ in COUNTS:
                    a, b = median(rs, f), median(base, f)
                    cells.append("-" if a is None or b is None else (f"{a / b:.2f}x" if a and b else f"{fmt(a)}/{fmt(b)}"))
                ratios[name][f"{label}/{peer}"] = rs_ratios
                rows.append([f"{label}/{peer}", "", ""] + cells)
        if not present:
            rows.append([f"(no {' or '.join(peers)} runs: no ratios)", ""] + [""] * (len(head) - 2))
        print_table(head, rows, markdown)
        if of in by_label:
            for peer in present:
                verdict = []
                for f, t, higher in METRICS:
                    q = ratios[name].get(f"{of}/{peer}", {}).get(f)
                    if q is not None and abs(q - 1) >= SAME:
                        better = (q > 1) == higher
                        verdict.append(f"{t}: {of if better else peer}")
                print(("\n" if markdown else "") + f"  better ({of} against {peer}): " + ("; ".join(verdict) or "-"))
    return ratios


def print_table(head, rows, markdown):
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
        return
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    for r in [head] + rows:
        print("  " + "  ".join(x.rjust(w) if i else x.ljust(w) for i, (x, w) in enumerate(zip(r, widths))))


def plot(ratios, peers, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    names = [n for n in ratios if ratios[n]]
    labels = list(dict.fromkeys(l for n in names for l in ratios[n]))
    if not names:
        sys.exit(f"nothing to plot: no scenario has runs of {' or '.join(peers)} and another relay")
    titles = {f: t for f, t, _ in METRICS}
    higher = {f: h for f, _, h in METRICS}
    height = 0.45 * len(names) * max(1, len(labels)) + 1.8
    fig, axes = plt.subplots(1, len(PLOTTED), figsize=(4 * len(PLOTTED), height),
                             sharey=True)
    colours = ["tab:blue", "tab:green", "tab:red", "tab:purple", "tab:orange", "tab:brown", "tab:olive", "tab:cyan"]
    bar = 0.8 / max(1, len(labels))
    for ax, f in zip(axes, PLOTTED):
        widest = 2.0
        for j, label in enumerate(labels):
            ys = [i + (j - (len(labels) - 1) / 2) * bar for i in range(len(names))]
            pts = [(y, ratios[n].get(label, {}).get(f)) for y, n in zip(ys, names)]
            pts = [(y, x) for y, x in pts if x]
            # Each bar runs from 1 (the same as the peer) to the ratio, either way.
            ax.barh([y for y, _ in pts], [x - 1 for _, x in pts], left=1, height=bar,
                    color=colours[j % len(colours)], label=label.replace("/", " / "))
            widest = max([widest] + [max(x, 1 / x) for _, x in pts])
        ax.set_xscale("log")
        ax.set_xlim(1 / (widest * 1.15), widest * 1.15)
        ax.xaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1, 2, 5) if widest < 20 else (1,)))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.axvline(1, color="black", linewidth=1)
        ax.set_title(f"{titles[f]}\n({'higher' if higher[f] else 'lower'} is better)")
        ax.grid(True, axis="x", which="major", alpha=0.3)
    axes[0].set_yticks(range(len(names)))
    axes[0].set_yticklabels(names)
    axes[0].invert_yaxis()
    handles, names_ = axes[0].get_legend_handles_labels()
    fig.legend(handles, names_, loc="lower center", ncol=len(labels), fontsize="small")
    fig.suptitle(f"Ratios to the {' and '.join(peers)} peers, medians of runs (1 = the same)")
    # Room in inches, whatever the height: the legend below, the title above the axes' titles.
    fig.tight_layout(rect=(0, 0.5 / height, 1, 1 - 0.5 / height))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"\nwrote {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--peer", default="tokio,uws",
                    help="the yardstick relays' labels, comma-separated (default tokio,uws: the best multi-threaded"
                         " peer, and uWebSockets on one thread)")
    ap.add_argument("--of", default="crossbar", help="the relay compared with it (default crossbar)")
    ap.add_argument("--placement", choices=["near", "far", "mixed"],
                    help="only runs made with the two CPUs near each other, far apart, or both (see above)")
    ap.add_argument("--far-ns", type=float, default=150,
                    help="a run is far above this CPU distance in ns (default 150: ~50-70 near, ~330 far here)")
    ap.add_argument("--markdown", action="store_true", help="Markdown tables")
    ap.add_argument("--plot", metavar="PNG", help="draw the ratios to this file, e.g. docs/img/ratios.png")
    args = ap.parse_args()
    runs = placed(load(args.results), args.placement, args.far_ns)
    if not runs:
        sys.exit("no runs in " + ", ".join(args.results) + (f" with the CPUs {args.placement}" if args.placement else ""))
    peers = [p for p in args.peer.split(",") if p]
    ratios = summarise(group(runs), args.of, peers, args.markdown, args.far_ns)
    if args.plot:
        plot(ratios, peers, args.plot)


if __name__ == "__main__":
    main()

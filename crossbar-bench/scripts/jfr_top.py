#!/usr/bin/env python3
"""Where the CPU went, from a JFR recording: the hottest methods (top of stack) and the hottest
frames anywhere on the stack (inclusive), from jdk.ExecutionSample events.

    java -XX:StartFlightRecording=filename=relay.jfr,settings=profile -jar crossbar.jar ...
    python3 crossbar-bench/scripts/jfr_top.py relay.jfr [--top 25] [--thread crossbar-io]
"""
import argparse
import collections
import json
import subprocess


def frames(event):
    st = event["values"].get("stackTrace") or {}
    for f in st.get("frames", []):
        m = f["method"]
        yield m["type"]["name"] + "." + m["name"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("recording")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--thread", default="", help="only samples of threads whose name starts with this")
    a = ap.parse_args()
    out = subprocess.run(["jfr", "print", "--json", "--events", "jdk.ExecutionSample", a.recording],
                         check=True, capture_output=True, text=True).stdout
    events = json.loads(out)["recording"]["events"]
    self_counts, incl_counts, threads = collections.Counter(), collections.Counter(), collections.Counter()
    n = 0
    for e in events:
        t = (e["values"].get("sampledThread") or {}).get("javaName") or "?"
        if not t.startswith(a.thread):
            continue
        n += 1
        threads[t.rstrip("0123456789-")] += 1
        fs = list(frames(e))
        if fs:
            self_counts[fs[0]] += 1
        for f in set(fs):
            incl_counts[f] += 1
    print(f"{n} samples; by thread: " + ", ".join(f"{k} {v}" for k, v in threads.most_common(6)))
    print(f"\nself (top of stack), top {a.top}:")
    for f, c in self_counts.most_common(a.top):
        print(f"  {100 * c / n:5.1f}%  {f}")
    print(f"\ninclusive, top {a.top}:")
    for f, c in incl_counts.most_common(a.top):
        print(f"  {100 * c / n:5.1f}%  {f}")


if __name__ == "__main__":
    main()

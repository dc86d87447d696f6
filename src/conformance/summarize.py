#!/usr/bin/env python3
"""Summarises an Autobahn|Testsuite fuzzingclient report (index.json) and decides pass or fail.

A case passes when its behaviour is OK, NON-STRICT or INFORMATIONAL. A case named with
--expect-close CASE=CODE passes instead when the relay closed it with CODE (e.g. 9.1.6=1009: a
16 MiB message over the default 10 MiB limit), whatever Autobahn's verdict on the echo.
Exit status: 0 all passed, 1 some failed, 2 the report is missing or empty.
"""
import argparse
import collections
import json
import sys

PASSING = {"OK", "NON-STRICT", "INFORMATIONAL"}


def case_key(case_id):
    return tuple(int(p) for p in case_id.split("."))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("index", help="reports/.../index.json")
    ap.add_argument("--expect-close", action="append", default=[], metavar="CASE=CODE")
    args = ap.parse_args()
    expected_close = {}
    for item in args.expect_close:
        case_id, code = item.split("=")
        expected_close[case_id] = int(code)

    try:
        with open(args.index) as f:
            index = json.load(f)
    except (OSError, ValueError) as e:
        print(f"no report: {e}")
        return 2
    cases = {}
    for agent_cases in index.values():
        cases.update(agent_cases)
    if not cases:
        print("report has no cases")
        return 2

    counts = collections.Counter()
    close_counts = collections.Counter()
    failures = []
    for case_id in sorted(cases, key=case_key):
        r = cases[case_id]
        behavior, close, code = r.get("behavior"), r.get("behaviorClose"), r.get("remoteCloseCode")
        close_counts[close] += 1
        if case_id in expected_close:
            want = expected_close[case_id]
            verdict = f"EXPECTED-{want}" if code == want else "FAILED"
            counts[verdict] += 1
            if code != want:
                failures.append((case_id, behavior, close, code, f"expected close code {want}"))
            continue
        counts[behavior] += 1
        if behavior not in PASSING:
            failures.append((case_id, behavior, close, code, ""))

    print(f"{len(cases)} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print("closing behaviour: " + ", ".join(f"{k} {v}" for k, v in sorted(close_counts.items())))
    for case_id, behavior, close, code, note in failures:
        print(f"  {case_id}: behavior={behavior} behaviorClose={close} remoteCloseCode={code} {note}".rstrip())
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# A relay's CPU per message split into user space and kernel, over 4 s of a run's measured window,
# read from /proc/<pid>/stat: where compare.sh gives the total, this tells the JVM's own work
# from the kernel's TCP work, which two relays on one machine share alike.
#
#   crossbar-bench/scripts/cpu-split.sh JAR|tokio|uws [SCENARIO...]
#
# JAR is started with the README's run command (plus --max-connections-per-address 20000) under
# setsid, as compare.sh does; "tokio" and "uws" start the peers built by compare.sh in PEERS_BUILD. The
# scenario defaults to ping-pong, 64 B, 64 in flight; the run is 5 s of warm-up and 8 s measured.
# Environment: JAVA (default java), JOPTS (extra JVM flags for the relay), PEERS_BUILD (default
# /tmp/crossbar-peers), SYSCALLS=1 (also count, with perf's tracepoints over the same 4 s, the
# relay's system calls per message by kind and its context switches per message: how many
# messages each wake-up handles; tracing adds to that run's CPU, so compare its CPU figures only
# with other SYSCALLS=1 runs), THREADS=1 (also split the CPU by thread name over the same 4 s:
# the event loops' share against the JIT compiler's, the collector's and the VM's). Prints one
# line: messages/s, user and system µs per message, total.
set -euo pipefail
cd "$(dirname "$0")/../.."
relay=${1:?usage: cpu-split.sh JAR|tokio|uws [SCENARIO...]}
shift
scenario=("$@")
[[ ${#scenario[@]} -gt 0 ]] || scenario=(pingpong --size 64 --window 64)
port=$((20000 + RANDOM % 20000))
log=$(mktemp)
load=$(mktemp)
# shellcheck source=relay-run.sh
. "$(dirname "$0")/relay-run.sh"
start_relay "$relay" "$port" "$log"
pid=$relay_pid
trap 'kill $pid 2>/dev/null || true; rm -f "$log" "$log.perf" "$log.t0" "$log.t1" "$load"' EXIT
start_load "$port" "$load" "${scenario[@]}"
sleep 8 # into the measured window (it starts ~5.5 s in)
read -r -a before < <(sed 's/.*) //' /proc/$pid/stat)
# One line per thread: its name, then user and system ticks (fields 14 and 15).
threads() { for t in /proc/$pid/task/*; do tr -d '\n' < $t/comm; sed 's/.*) //' $t/stat | awk '{print "\t" $12 "\t" $13}'; done 2> /dev/null; }
[[ ${THREADS:-0} == 1 ]] && threads > "$log.t0"
if [[ ${SYSCALLS:-0} == 1 ]]; then
  events=context-switches,raw_syscalls:sys_enter$(per_call_events)
  perf stat -x, -e "$events" -p $pid -- sleep 4 2> "$log.perf"
else
  sleep 4
fi
read -r -a after < <(sed 's/.*) //' /proc/$pid/stat)
[[ ${THREADS:-0} == 1 ]] && threads > "$log.t1"
wait $load_pid
rate=$(awk '/^ run/ {print $12}' "$load")
# Fields 14 and 15 of /proc/<pid>/stat (utime, stime, in clock ticks) are 11 and 12 after the name.
awk -v r="$rate" -v u=$((after[11] - before[11])) -v s=$((after[12] - before[12])) -v hz="$(getconf CLK_TCK)" \
  -v n="$(basename "$relay")" 'BEGIN {
    m = r * 4
    printf "%-20s msg/s %7d  user %.2f µs/msg  system %.2f µs/msg  total %.2f\n", n, r, u / hz * 1e6 / m, s / hz * 1e6 / m, (u + s) / hz * 1e6 / m
  }'
if [[ ${SYSCALLS:-0} == 1 ]]; then
  # perf -x, lines: count,unit,event,...; events it could not count are "<not supported>" or 0.
  awk -F, -v r="$rate" 'BEGIN { m = r * 4; printf "  per message:" }
    $1 + 0 > 0 { e = $3; sub("syscalls:sys_enter_", "", e); sub("raw_syscalls:sys_enter", "all syscalls", e); printf "  %s %.3f", e, $1 / m }
    END { print "" }' "$log.perf"
fi
if [[ ${THREADS:-0} == 1 ]]; then
  # Threads of one kind share a name but for a number ("C2 CompilerThre", "GC Thread#0"): the
  # digits are dropped so each kind is one figure. Thread IDs would pair the two samples more
  # exactly, but a thread that starts or ends between them is counted either way.
  awk -F'\t' -v r="$rate" -v hz="$(getconf CLK_TCK)" '
    { k = $1; gsub(/[#-]?[0-9]+$/, "", k) }
    FNR == NR { t[k] -= $2 + $3; next }
    { t[k] += $2 + $3 }
    END { m = r * 4; printf "  by thread, µs/msg:"; for (k in t) if (t[k] > 0) printf "  %s %.3f", k, t[k] / hz * 1e6 / m; print "" }' "$log.t0" "$log.t1"
fi

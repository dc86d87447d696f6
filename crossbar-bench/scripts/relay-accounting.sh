#!/usr/bin/env bash
# What a relay does in 5 s of a run's measured window: its system calls (perf stat on its pid)
# and each thread's user and system CPU (/proc/<pid>/task/*/stat), beside the run's own line.
# The relay is started in its own session (setsid), with the README's settings for Crossbar.
#
#   crossbar-bench/scripts/relay-accounting.sh crossbar|tokio OUT [load generator scenario...]
#   e.g. ... crossbar /tmp/fanout fanout -n 100 --rate 0 --size 4600
#
# Needs perf with tracepoints (run as root), the bench jar (mvn package) and, for tokio, the
# peer built by compare.sh (PEERS_BUILD, default /tmp/crossbar-peers). JAR picks the relay jar;
# EVENTS the perf events (EVENTS=all: each system call of a relay's hot path on its own).
# JAVA and JOPTS as in relay-run.sh, which starts the relay and the load generator.
set -euo pipefail
relay=$1 out=$2
shift 2
scenario=("$@")
[[ ${#scenario[@]} -gt 0 ]] || scenario=(pingpong --size 64 --window 64)
jar=${JAR:-crossbar-server/target/crossbar.jar}
port=$((20000 + RANDOM % 20000))
case "$relay" in
  tokio) ;;
  crossbar) relay=$jar ;;
  *) echo "relay: '$relay' (expected: crossbar or tokio)" >&2; exit 2 ;;
esac
# shellcheck source=relay-run.sh
. "$(dirname "$0")/relay-run.sh"
start_relay "$relay" "$port" /dev/null
pid=$relay_pid
trap 'kill $pid 2>/dev/null || true' EXIT
start_load "$port" "$out.load" "${scenario[@]}"
sleep 8 # into the measured window (5 s of warm-up)
threads() { for t in /proc/$pid/task/*; do echo "$(tr ' ' _ < "$t/comm") $(cut -d' ' -f14,15 "$t/stat")"; done; }
# One tracepoint for all system calls by default: with eleven per-call tracepoints attached
# (EVENTS=all), perf slowed the relay's fan-out by a third or more, more for some builds than for
# others.
events=${EVENTS:-context-switches,raw_syscalls:sys_enter}
if [[ $events == all ]]; then
  events=context-switches$(per_call_events)
fi
threads > "$out.t0"
perf stat -x, -o "$out.perf" -e "$events" -p $pid -- sleep 5
threads > "$out.t1"
wait $load_pid
grep '^ run' "$out.load"
grep -v '^#' "$out.perf" | awk -F, 'NF > 2 && $1 != "0" { print "  " $3, $1 }'
# Clock ticks (USER_HZ, 100 a second) to milliseconds, per thread name.
join <(sort "$out.t0" | awk '{u[$1]+=$2; s[$1]+=$3} END {for (k in u) print k, u[k], s[k]}' | sort) \
     <(sort "$out.t1" | awk '{u[$1]+=$2; s[$1]+=$3} END {for (k in u) print k, u[k], s[k]}' | sort) |
  awk '{du = ($4 - $2) * 10; ds = ($5 - $3) * 10; tu += du; ts += ds
        if (du + ds > 0) printf "  thread %-20s user %d ms sys %d ms\n", $1, du, ds}
       END {printf "  total user %d ms sys %d ms\n", tu, ts}'

#!/usr/bin/env bash
# How a relay's CPU per message settles under a steady low rate, minute by minute, from a fresh
# start: the JIT compiles a low-rate relay's code over minutes, not seconds (issue 42: "what a
# low-rate relay costs after one minute and after ten").
#
#   crossbar-bench/scripts/jit-settling.sh tokio|uws|JAR [MINUTES] [SCENARIO ARGS...]
#
# Starts the relay as deployed (relay-run.sh: the README's command, its own session), runs one
# paced load against it for MINUTES (default 10, the load generator's longest run; default load:
# 10 cameras x 4 viewers at 30 msg/s of 4,600 B, 1,200 deliveries a second), and prints, for each
# minute, the relay's CPU in ms per second (utime + stime from /proc, whole process), then the load
# generator's summary: divided by its deliveries a second, the CPU per message, minute by minute.
set -euo pipefail
cd "$(dirname "$0")/../.."
relay=${1:?tokio, uws or a relay jar}
minutes=${2:-10}
shift $(( $# >= 2 ? 2 : 1 ))
load=("$@")
[[ ${#load[@]} -gt 0 ]] || load=(streams --streams 10 -n 4 --rate 30 --size 4600)
# shellcheck source=relay-run.sh
source crossbar-bench/scripts/relay-run.sh
port=$(( 20000 + RANDOM % 20000 ))
log=$(mktemp)
if [[ $relay == uws ]]; then
  setsid env LISTEN=127.0.0.1:$port "${PEERS_BUILD:-/tmp/crossbar-peers}/uws-relay" > "$log" 2>&1 &
  relay_pid=$!
  for _ in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$port) 2> /dev/null && break; sleep 0.2; done
else
  start_relay "$relay" "$port" "$log"
fi
trap 'kill "$relay_pid" 2> /dev/null || true' EXIT
out=$(mktemp)
java -Xms1g -Xmx1g -XX:+UseParallelGC -cp crossbar-bench/target/benchmarks.jar dev.crossbar.bench.load.LoadMain \
  "${load[@]}" --url ws://127.0.0.1:$port --pid "$relay_pid" --warmup 0s --duration "$((minutes * 60))s" \
  > "$out" 2>&1 &
load_pid=$!
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$relay_pid/stat"; }
sleep 5 # connecting
# A load that ended already (a refused argument) would leave the idle relay's CPU to be read as its.
kill -0 "$load_pid" 2> /dev/null || { echo "the load ended before it began:" >&2; cat "$out" >&2; exit 1; }
echo "minute  relay CPU ms/s"
previous=$(cpu)
for minute in $(seq "$minutes"); do
  sleep 60
  now=$(cpu)
  awk -v a="$previous" -v b="$now" -v t="$ticks" -v m="$minute" 'BEGIN { printf "%6d  %8.1f\n", m, (b - a) * 1000 / t / 60 }'
  previous=$now
done
wait "$load_pid" || true
tail -n 25 "$out"

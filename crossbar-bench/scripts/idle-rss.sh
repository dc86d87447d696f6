#!/usr/bin/env bash
# The RSS of one relay, every 0.5 s, while the load generator opens 10,000 idle connections and
# holds them: shows when the handshakes' freed memory goes back (the README's JVM trims the C heap
# every 5 s), which is why compare.sh's idle row reads the RSS 6 s after the last handshake.
#
#   crossbar-bench/scripts/idle-rss.sh JAR|tokio [PORT] > trace.txt
#
# Each line: seconds since the generator started, the relay's VmRSS in KiB; then the generator's
# own summary. Needs crossbar-bench/target/benchmarks.jar (./mvnw -B -ntp package -DskipTests).
set -euo pipefail
cd "$(dirname "$0")/../.."
source crossbar-bench/scripts/relay-run.sh
relay=${1:?usage: idle-rss.sh JAR|tokio [PORT]} port=${2:-47100}
log=$(mktemp) out=$(mktemp)
trap 'kill "$relay_pid" 2> /dev/null || true; rm -f "$log" "$out"' EXIT
start_relay "$relay" "$port" "$log"
sleep 2 # the JVM's warm-up compiles settle
start_load "$port" "$out" idle -n 10000 --settle 3s
start=$(date +%s%N)
while kill -0 "$load_pid" 2> /dev/null; do
  now=$(date +%s%N)
  printf '%.1f %s\n' "$(( (now - start) / 1000000 ))e-3" "$(awk '/VmRSS/ {print $2}' "/proc/$relay_pid/status")"
  sleep 0.5
done
grep -E 'idle:' "$out" || cat "$out"

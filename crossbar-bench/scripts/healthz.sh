#!/usr/bin/env bash
# HTTP keep-alive throughput of /healthz, per core of relay CPU: starts the fat jar in its own
# session (setsid), warms it up, then runs Debian's wrk against /healthz while sampling the relay
# process's CPU time (utime + stime from /proc/PID/stat), and prints requests/s and requests/s
# per core of relay CPU. Target (issue 17): >= 43,500 req/s per core, the Crossbar.io web
# benchmark's 174,000 small responses/s on 4 cores.
#
#   crossbar-bench/scripts/healthz.sh [--duration 10s] [--warmup 5s] [--connections 64]
#                                     [--threads 2] [--port 18081] [--event-loops N]
#
# Environment: CROSSBAR_JAR (default crossbar-server/target/crossbar.jar; built with ./mvnw if
# missing), JAVA_OPTS (relay JVM flags, default -Xmx512m), RELAY_CPUS / WRK_CPUS (taskset CPU
# lists to keep the relay and wrk apart, e.g. RELAY_CPUS=0 WRK_CPUS=1; default: not pinned).
# Exit status: 0 when the run completed with only 2xx answers, 1 otherwise, 2 on a usage error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

duration=10s
warmup=5s
connections=64
threads=2
port=18081
event_loops=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --connections) connections=$2; shift ;;
    --threads) threads=$2; shift ;;
    --port) port=$2; shift ;;
    --event-loops) event_loops=$2; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

command -v wrk >/dev/null 2>&1 || { echo "wrk not found: apt-get install wrk" >&2; exit 2; }
jar=${CROSSBAR_JAR:-crossbar-server/target/crossbar.jar}
if [ ! -f "$jar" ]; then
  ./mvnw -B -ntp -q package -DskipTests -pl crossbar-server -am
fi

log=$(mktemp)
relay_args=(--listen "127.0.0.1:$port")
[ -n "$event_loops" ] && relay_args+=(--event-loops "$event_loops")
# shellcheck disable=SC2206 # JAVA_OPTS is a list of flags
relay=(java ${JAVA_OPTS:--Xmx512m} -jar "$jar" "${relay_args[@]}")
[ -n "${RELAY_CPUS:-}" ] && relay=(taskset -c "$RELAY_CPUS" "${relay[@]}")
# Its own session and process group (setsid --fork: whatever the caller's group), so the whole
# group can be stopped at the end whatever happens. The relay's pid is read back from its group.
setsid --fork "${relay[@]}" >"$log" 2>&1 </dev/null
pid=""
for _ in $(seq 1 50); do
  pid=$(pgrep -n -f -- "-jar $jar --listen 127.0.0.1:$port" || true)
  [ -n "$pid" ] && break
  sleep 0.1
done
[ -n "$pid" ] || { cat "$log"; echo "the relay did not start" >&2; exit 1; }
stop() {
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
}
trap stop EXIT

url="http://127.0.0.1:$port/healthz"
for _ in $(seq 1 300); do
  curl -fs "$url" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "the relay exited" >&2; exit 1; }
  sleep 0.1
done
curl -fs "$url" >/dev/null || { cat "$log"; echo "the relay did not answer $url" >&2; exit 1; }

# utime + stime of the relay, in clock ticks: fields 14 and 15 of /proc/PID/stat, counted after the
# ")" that ends the command name (which may itself hold spaces).
cpu_ticks() {
  local stat
  stat=$(<"/proc/$pid/stat")
  stat=${stat##*) }
  awk '{ print $12 + $13 }' <<<"$stat"
}
ticks_per_second=$(getconf CLK_TCK)

wrk_args=(-c "$connections" -t "$threads" "$url")
wrk_cmd=(wrk)
[ -n "${WRK_CPUS:-}" ] && wrk_cmd=(taskset -c "$WRK_CPUS" wrk)
echo "relay pid $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
echo "warm-up: wrk -d $warmup ${wrk_args[*]}"
"${wrk_cmd[@]}" -d "$warmup" "${wrk_args[@]}" >/dev/null

echo "run: wrk -d $duration ${wrk_args[*]}"
out=$(mktemp)
cpu_before=$(cpu_ticks)
t0=$(date +%s%N)
"${wrk_cmd[@]}" -d "$duration" "${wrk_args[@]}" >"$out"
t1=$(date +%s%N)
cpu_after=$(cpu_ticks)
cat "$out"

requests=$(awk '/requests in/ { print $1 }' "$out")
errors=$(awk '/Non-2xx or 3xx responses/ { print $NF }' "$out")
socket_errors=$(grep -c 'Socket errors' "$out" || true)
awk -v req="$requests" -v ticks=$((cpu_after - cpu_before)) -v hz="$ticks_per_second" \
    -v ns=$((t1 - t0)) -v loops="${event_loops:-default}" '
  BEGIN {
    wall = ns / 1e9; cpu = ticks / hz
    printf "relay: %.2f s CPU over %.2f s (%.2f cores busy; event loops: %s)\n", cpu, wall, cpu / wall, loops
    printf "requests/s: %.0f\n", req / wall
    if (cpu > 0) printf "requests/s per core of relay CPU: %.0f (target >= 43500)\n", req / cpu
  }'
rm -f "$out" "$log"
if [ -n "$errors" ] || [ "$socket_errors" -gt 0 ]; then
  echo "FAILED: non-2xx answers (${errors:-0}) or socket errors (see above)" >&2
  exit 1
fi

#!/usr/bin/env bash
# Runs the published comparison: each scenario against Crossbar and against another relay
# (by default the original Go crossbar), alternating run by run so both see the same machine
# load, and appends one JSON line per run to $OUT. Then: python3 crossbar-bench/scripts/plot.py $OUT
#
#   crossbar-bench/scripts/compare.sh [OUT] [REPEATS] [SCENARIO-FILTER-REGEX]
#
# Environment:
#   OTHER_SPAWN  command that starts the other relay with {port} for its port
#                (default: /tmp/gocrossbar/run.sh {port}); OTHER_LABEL (default: go)
#   DURATION, WARMUP  per run (default 10s, 5s: a fresh JVM needs a few seconds of JIT)
# Every run is bounded (warm-up + duration + drain <= ~25 s); the whole matrix takes ~30 min.
set -euo pipefail
cd "$(dirname "$0")/../.."

OUT="${1:-crossbar-bench/target/results.jsonl}"
REPEATS="${2:-3}"
FILTER="${3:-.}"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-5s}"
OTHER_LABEL="${OTHER_LABEL:-go}"
OTHER_SPAWN="${OTHER_SPAWN:-/tmp/gocrossbar/run.sh {port}}"
CROSSBAR_SPAWN="java -Xms64m -Xmx256m -XX:MaxDirectMemorySize=256m -XX:+UseSerialGC -Dio.netty.leakDetection.level=disabled -jar crossbar-server/target/crossbar.jar --listen 127.0.0.1:{port} --max-connections-per-address 20000"
LOAD=(java -Xms1g -Xmx1g -XX:+UseParallelGC -cp crossbar-bench/target/benchmarks.jar dev.crossbar.bench.load.LoadMain)

# 10,000 idle connections need ~10,000 descriptors on each side.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# name | load generator arguments
MATRIX=(
  "pingpong-64|pingpong --size 64"
  "pingpong-3|pingpong --size 3"
  "pingpong-64-at-100k|pingpong --size 64 --rate 100000"
  "size-1k|pingpong --size 1KiB"
  "size-4600|pingpong --size 4600"
  "size-64k|pingpong --size 64KiB --window 8"
  "large-1m|large --size 1MiB --window 2"
  "large-1m-w1|large --size 1MiB --window 1"
  "fanout-video-100|fanout -n 100 --rate 30"
  "fanout-video-500|fanout -n 500 --rate 30"
  "fanout-video-1000|fanout -n 1000 --rate 30"
  "fanout-video-5000|fanout -n 5000 --rate 30"
  "fanout-fast-10|fanout -n 10 --rate 0"
  "fanout-fast-100|fanout -n 100 --rate 0"
  "fanout-fast-100-64b|fanout -n 100 --rate 0 --size 64"
  "mesh-10|mesh -n 10 --rate 100"
  "slow|slow -n 10 --rate 2000"
  "slow-500|slow -n 10 --rate 500"
  "idle-10000|idle -n 10000 --settle 3s --duration 5s"
)

iperf() {
  # The loopback ceiling, on the same machine in the same session: one TCP stream, 1 MiB writes.
  command -v iperf3 >/dev/null || { echo "iperf3 not installed (apt-get install -y iperf3)" >&2; return 0; }
  iperf3 -s -B 127.0.0.1 -p 5299 -1 >/dev/null 2>&1 &
  local server=$!
  sleep 0.5
  local gbit
  gbit=$(iperf3 -c 127.0.0.1 -p 5299 -t 10 -l 1M -J | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9, 2))')
  wait "$server" 2>/dev/null || true
  echo "{\"kind\":\"iperf3\",\"time\":\"$(date -u +%FT%TZ)\",\"gbitS\":$gbit}" >> "$OUT"
  echo "iperf3 loopback: $gbit Gbit/s"
}

mkdir -p "$(dirname "$OUT")"
iperf
for rep in $(seq 1 "$REPEATS"); do
  for entry in "${MATRIX[@]}"; do
    name="${entry%%|*}"
    args="${entry#*|}"
    [[ "$name" =~ $FILTER ]] || continue
    for relay in crossbar "$OTHER_LABEL"; do
      if [[ "$relay" == crossbar ]]; then spawn="$CROSSBAR_SPAWN"; else spawn="$OTHER_SPAWN"; fi
      echo "== $name $relay (run $rep) $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
      # shellcheck disable=SC2086
      timeout 300 "${LOAD[@]}" --label "$relay" --topic "$name" --spawn "$spawn" \
        --duration "$DURATION" --warmup "$WARMUP" --json "$OUT" $args 2>&1 | grep -v ' INFO ' || echo "   (run failed)"
    done
  done
done
iperf

#!/usr/bin/env bash
# The side-by-side comparison: each scenario against Crossbar and the peer relays (tokio,
# uWebSockets, Node.js; the Go original too if GO_SPAWN is given), alternating relays run by run
# (the order rotates each repeat), a fresh relay process per run, each in its own session (setsid),
# the load generator writing one frame per write. Appends one JSON line per run to OUT; then
#   python3 crossbar-bench/scripts/ratios.py OUT [--plot docs/img/ratios.png]
# prints each relay's medians and Crossbar's ratios to the tokio and uWebSockets peers.
#
#   crossbar-bench/scripts/compare.sh [OUT] [REPEATS] [SCENARIO-FILTER-REGEX]
#
# OUT defaults to crossbar-bench/target/peers.jsonl, REPEATS to 3, the filter to every scenario.
# Environment (all optional):
#   PEERS_DIR     the peers' sources (default: ../shared/peers beside the repository); read only
#   PEERS_BUILD   where they are copied and built (default /tmp/crossbar-peers; never the repository
#                 or PEERS_DIR), by scripts/build-peers.sh
#   UWS_SRC       the uWebSockets and uSockets sources the uws peer is built from (needed once, when
#                 PEERS_BUILD has no uws-relay yet or to rebuild it); how to make the directory from
#                 the two repositories is at the top of scripts/build-peers.sh
#   RELAYS        which relays, in order (default "crossbar tokio uws node", plus "go" with GO_SPAWN);
#                 crossbar-home and crossbar-nohome are Crossbar with --home-loop-members 16 and 0;
#                 crossbar-alt is Crossbar as CROSSBAR_ALT_SPAWN starts it (a setting under trial)
#   GO_SPAWN      command starting the Go original with {port} for its port, which must exec the
#                 relay (e.g. /tmp/gocrossbar/run.sh {port}); CROSSBAR_SPAWN, TOKIO_SPAWN,
#                 UWS_SPAWN and NODE_SPAWN override the others' commands
#   MATRIX        "issue" (default: the scenarios of issue 13), "all" (adds the size sweep and the
#                 other rows of the earlier Go comparison) or "campus" (issue 42: many streams, many
#                 small topics, a mixed load, and the issue's rows of the matrix)
#   DURATION, WARMUP  per run (default 10s and 5s: a fresh JVM needs seconds of JIT); steady state
#                 is WARMUP=60s (a minute of the same traffic first, unmeasured); a cold run is
#                 WARMUP=0, whose lines carry firstRelayMs and the first 10 s' p99 (p99First10sUs)
#   BATCH         frames per write (default 1; 256 is the generator's earlier behaviour)
#   SESSION       own | inherit (default own: setsid)
#   IPERF         1 (default) measures the loopback ceiling with iperf3 before and after; 0 skips it
#   TRACE_DIR     if set, each run's latency by moment of arrival goes to
#                 TRACE_DIR/<scenario>-<relay>-<run>.tsv (--latency-trace)
# Through each run it records once a second how far apart the two CPUs are (scripts/cpu-distance.c,
# built with cc if there is one): a virtual machine's host moves its CPUs between near and far
# placements, which halves some rows; ratios.py then compares runs of one placement (--placement).
# Every run is bounded (timeout 240 s plus warm-up and duration; typically warm-up + duration + 3-8 s,
# longer for 5,000 subscribers and idle): the default matrix, 108 runs with 4 relays, takes 40-55
# minutes; the campus matrix at WARMUP=60s DURATION=20s, 11 rows x 4 relays, about an hour a
# repeat (docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$(pwd -P)"

OUT="${1:-crossbar-bench/target/peers.jsonl}"
REPEATS="${2:-3}"
FILTER="${3:-.}"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-5s}"
BATCH="${BATCH:-1}"
SESSION="${SESSION:-own}"
MATRIX="${MATRIX:-issue}"
IPERF="${IPERF:-1}"
TRACE_DIR="${TRACE_DIR:-}"
PEERS_DIR="${PEERS_DIR:-$ROOT/../shared/peers}"
PEERS_BUILD="${PEERS_BUILD:-/tmp/crossbar-peers}"
GO_SPAWN="${GO_SPAWN:-}"
RELAYS="${RELAYS:-crossbar tokio uws node${GO_SPAWN:+ go}}"

# (Defaults in their own variables: a '}' inside ${VAR:-...} would end the expansion at {port}.)
default_crossbar='env MALLOC_ARENA_MAX=2 java -Xms64m -Xmn12m -Xmx256m -XX:MaxDirectMemorySize=256m -XX:+UseSerialGC -XX:-UsePerfData -XX:TrimNativeHeapInterval=5000 -XX:SharedArchiveFile=crossbar-server/target/crossbar.jsa -Dio.netty.leakDetection.level=disabled -jar crossbar-server/target/crossbar.jar --listen 127.0.0.1:{port} --max-connections-per-address 20000'
default_tokio="env LISTEN=127.0.0.1:{port} $PEERS_BUILD/rust-target/release/rust-tokio-relay"
default_node="env LISTEN=127.0.0.1:{port} node $PEERS_BUILD/node-ws/relay.js"
default_uws="env LISTEN=127.0.0.1:{port} $PEERS_BUILD/uws-relay"
CROSSBAR_SPAWN="${CROSSBAR_SPAWN:-$default_crossbar}"
TOKIO_SPAWN="${TOKIO_SPAWN:-$default_tokio}"
NODE_SPAWN="${NODE_SPAWN:-$default_node}"
UWS_SPAWN="${UWS_SPAWN:-$default_uws}"
LOAD=(java -Xms1g -Xmx1g -XX:+UseParallelGC -cp crossbar-bench/target/benchmarks.jar dev.crossbar.bench.load.LoadMain)

# name | load generator arguments [| arguments for Crossbar only] (names are topics: letters,
# digits, . _ -). mixed's file transfer runs under slow=backpressure on Crossbar (the rule covers
# its stream only); the peers have no such rule and run the same path as they are.
ISSUE_ROWS=(
  "pingpong-64-w64|pingpong --size 64 --window 64"
  "mesh-10x100-64|mesh -n 10 --rate 100 --size 64"
  "large-1m-w4|large --size 1MiB --window 4"
  "large-1m-w8|large --size 1MiB --window 8"
  "fanout-fast-100|fanout -n 100 --rate 0 --size 4600"
  "fanout-video-500|fanout -n 500 --rate 30 --size 4600"
  "fanout-video-5000|fanout -n 5000 --rate 30 --size 4600"
  "slow-10-plus-1-at-30|slow -n 10 --rate 30 --size 4600"
  "idle-10000|idle -n 10000 --settle 6s --duration 5s"
)
CAMPUS_ROWS=(
  "streams-200x4|streams --streams 200 -n 4 --rate 30 --size 4600"
  "topics-1000x2|topics --groups 1000 -n 2 --rate 10 --size 200"
  "mixed|mixed --groups 50 -n 4 --data-topics 200 --stalled 1|--slow backpressure"
  "mixed-nostall|mixed --groups 50 -n 4 --data-topics 200 --stalled 0|--slow backpressure"
)
if [[ "$MATRIX" == campus ]]; then
  SCENARIOS=("${CAMPUS_ROWS[@]}")
  for entry in "${ISSUE_ROWS[@]}"; do
    case "${entry%%|*}" in
      fanout-fast-100|fanout-video-5000) ;;
      *) SCENARIOS+=("$entry") ;;
    esac
  done
else
  SCENARIOS=("${ISSUE_ROWS[@]}")
fi
if [[ "$MATRIX" == all ]]; then
  SCENARIOS+=(
    "pingpong-3|pingpong --size 3"
    "pingpong-64|pingpong --size 64"
    "pingpong-64-at-100k|pingpong --size 64 --rate 100000"
    "size-1k|pingpong --size 1KiB"
    "size-4600|pingpong --size 4600"
    "size-64k|pingpong --size 64KiB --window 8"
    "large-1m-w2|large --size 1MiB --window 2"
    "large-1m-w1|large --size 1MiB --window 1"
    "fanout-video-100|fanout -n 100 --rate 30"
    "fanout-video-1000|fanout -n 1000 --rate 30"
    "fanout-fast-10|fanout -n 10 --rate 0"
    "fanout-fast-500|fanout -n 500 --rate 0 --size 4600"
    "fanout-fast-100-64b|fanout -n 100 --rate 0 --size 64"
    "mesh-10|mesh -n 10 --rate 100"
    "slow|slow -n 10 --rate 2000"
    "slow-500|slow -n 10 --rate 500"
  )
elif [[ "$MATRIX" != issue && "$MATRIX" != campus ]]; then
  echo "MATRIX: '$MATRIX' (expected: issue, all or campus)" >&2
  exit 2
fi

spawn_of() {
  case "$1" in
    crossbar) echo "$CROSSBAR_SPAWN" ;;
    crossbar-home) echo "$CROSSBAR_SPAWN --home-loop-members 16" ;;
    crossbar-nohome) echo "$CROSSBAR_SPAWN --home-loop-members 0" ;;
    crossbar-alt) [[ -n "${CROSSBAR_ALT_SPAWN:-}" ]] || { echo "relay crossbar-alt: set CROSSBAR_ALT_SPAWN" >&2; exit 2; }
                  echo "$CROSSBAR_ALT_SPAWN" ;;
    tokio) echo "$TOKIO_SPAWN" ;;
    uws) echo "$UWS_SPAWN" ;;
    node) echo "$NODE_SPAWN" ;;
    go) [[ -n "$GO_SPAWN" ]] || { echo "relay go: set GO_SPAWN" >&2; exit 2; }; echo "$GO_SPAWN" ;;
    *) echo "relay '$1' (expected: crossbar, crossbar-home, crossbar-nohome, crossbar-alt, tokio, uws, node or go)" >&2; exit 2 ;;
  esac
}

seconds_of() { # seconds_of 60s|2m|500ms|10: whole seconds, rounded up
  local v=$1
  case "$v" in
    *ms) echo $(( (${v%ms} + 999) / 1000 )) ;;
    *m) echo $(( ${v%m} * 60 )) ;;
    *s) echo "${v%s}" | awk '{ printf "%d", ($1 == int($1)) ? $1 : int($1) + 1 }' ;;
    *) echo "$v" | awk '{ printf "%d", ($1 == int($1)) ? $1 : int($1) + 1 }' ;;
  esac
}

build_peers() {
  # The peers among the relays, built outside the repository (scripts/build-peers.sh).
  local peers=() r
  for r in "${relays[@]}"; do
    case "$r" in
      tokio|uws|node) peers+=("$r") ;;
    esac
  done
  [[ ${#peers[@]} -eq 0 ]] || PEERS_DIR="$PEERS_DIR" PEERS_BUILD="$PEERS_BUILD" UWS_SRC="${UWS_SRC:-}" \
    crossbar-bench/scripts/build-peers.sh "${peers[@]}"
}

iperf() {
  # The loopback ceiling, on the same machine in the same session: one TCP stream, 1 MiB writes.
  [[ "$IPERF" == 1 ]] || return 0
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

build_distance_probe() {
  command -v cc >/dev/null || { echo "no C compiler: CPU placement not recorded (apt-get install -y gcc)" >&2; return 0; }
  cc -O2 -pthread -o "$PEERS_BUILD/cpu-distance" crossbar-bench/scripts/cpu-distance.c
}

watch_cpu_distance() { # watch_cpu_distance FILE: samples once a second into FILE until killed
  [[ -x "$PEERS_BUILD/cpu-distance" ]] || return 0
  "$PEERS_BUILD/cpu-distance" --watch > "$1" 2>/dev/null &
  watcher=$!
}

record_cpu_distance() { # record_cpu_distance FILE: one line after the run's; ratios.py reads it
  [[ -n "${watcher:-}" ]] || return 0
  kill "$watcher" 2>/dev/null || true
  wait "$watcher" 2>/dev/null || true
  watcher=
  echo "{\"kind\":\"cpuDistance\",\"time\":\"$(date -u +%FT%TZ)\",\"ns\":[$(paste -sd, "$1")]}" >> "$OUT"
  rm -f "$1"
}

setup_line() {
  # What the figures depend on, once per invocation (ratios.py ignores it; people should not).
  python3 - "$@" <<'EOF' >> "$OUT"
import json, os, subprocess, sys, time
def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
    except Exception:
        return None
keys = ["relays", "batch", "spawnSession", "duration", "warmup", "repeats", "matrix"]
line = {"kind": "setup", "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
line.update(dict(zip(keys, sys.argv[1:])))
line.update({
    "commit": sh("git rev-parse --short HEAD"),
    "autogroup": sh("cat /proc/sys/kernel/sched_autogroup_enabled"),
    "cpus": os.cpu_count(),
    "loadavg": sh("cut -d' ' -f1-3 /proc/loadavg"),
    "java": sh("java -version 2>&1"),
    "node": sh("node --version"),
    "rustc": sh("rustc --version"),
    "ws": sh("node -p \"require('" + os.environ["PEERS_BUILD"] + "/node-ws/node_modules/ws/package.json').version\""),
    # What the uws peer was built from: relay.cpp, build.sh and the sources' digest (build-peers.sh).
    "uws": sh("cat " + os.environ["PEERS_BUILD"] + "/uws-relay.sha256"),
})
print(json.dumps(line))
EOF
}

[[ -f crossbar-server/target/crossbar.jar && -f crossbar-bench/target/benchmarks.jar ]] ||
  ./mvnw -B -ntp -q package -DskipTests
read -r -a relays <<< "$RELAYS"
for relay in "${relays[@]}"; do spawn_of "$relay" >/dev/null; done
build_peers
mkdir -p "$PEERS_BUILD"
build_distance_probe
run_timeout=$(( 240 + $(seconds_of "$WARMUP") + $(seconds_of "$DURATION") ))

# 10,000 idle connections need ~10,000 descriptors on each side (the relays inherit this).
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
mkdir -p "$(dirname "$OUT")"
[[ -z "$TRACE_DIR" ]] || mkdir -p "$TRACE_DIR"
selected=0
for entry in "${SCENARIOS[@]}"; do
  if [[ "${entry%%|*}" =~ $FILTER ]]; then selected=$((selected + 1)); fi
done
runs=$((selected * ${#relays[@]} * REPEATS))
echo "$runs runs: $selected scenarios x ${#relays[@]} relays (${relays[*]}) x $REPEATS, batch $BATCH, session $SESSION -> $OUT"
PEERS_BUILD="$(cd "$PEERS_BUILD" && pwd -P)"
export PEERS_BUILD
setup_line "${relays[*]}" "$BATCH" "$SESSION" "$DURATION" "$WARMUP" "$REPEATS" "$MATRIX"
iperf
done_runs=0
for rep in $(seq 1 "$REPEATS"); do
  # Rotate the order each repeat, so no relay always runs first (or just after another).
  shift_by=$(( (rep - 1) % ${#relays[@]} ))
  order=("${relays[@]:$shift_by}" "${relays[@]:0:$shift_by}")
  for entry in "${SCENARIOS[@]}"; do
    name="${entry%%|*}"
    rest="${entry#*|}"
    args="${rest%%|*}"
    crossbar_args=""
    [[ "$rest" != *"|"* ]] || crossbar_args="${rest#*|}"
    [[ "$name" =~ $FILTER ]] || continue
    for relay in "${order[@]}"; do
      extra=""
      [[ "$relay" != crossbar* ]] || extra="$crossbar_args"
      done_runs=$((done_runs + 1))
      echo "== [$done_runs/$runs] $name $relay (run $rep) $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
      watch_cpu_distance "$OUT.cpu-distance"
      trace=()
      [[ -z "$TRACE_DIR" ]] || trace=(--latency-trace "$TRACE_DIR/$name-$relay-$rep.tsv")
      # Common flags first: a scenario's own (idle's --duration) come last and win.
      # shellcheck disable=SC2086
      timeout -k 10 "$run_timeout" "${LOAD[@]}" --label "$relay" --topic "$name" --spawn "$(spawn_of "$relay")" \
        --spawn-session "$SESSION" --batch "$BATCH" --duration "$DURATION" --warmup "$WARMUP" \
        --json "$OUT" "${trace[@]}" $args $extra 2>&1 | grep -v ' INFO ' || echo "   (run failed)"
      record_cpu_distance "$OUT.cpu-distance"
    done
  done
done
iperf
echo "done: python3 crossbar-bench/scripts/ratios.py $OUT"

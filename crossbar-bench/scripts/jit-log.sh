#!/usr/bin/env bash
# What the JIT compiler does once a relay serves: one run with -XX:+LogCompilation, then a summary
# of what happened after the port opened (uncommon traps, those in the event loop's read path,
# C2 compilations and their CPU, the longest ones), by jit-summary.py.
#
#   crossbar-bench/scripts/jit-log.sh JAR OUT [SCENARIO...]
#
# JAR is started with the README's run command under setsid, as compare.sh does; the scenario
# defaults to the mesh, 10 clients x 100 msg/s of 64 B, started as soon as the port answers and run
# for 5 s of warm-up and 8 s measured. Writes OUT.xml (the compilation log), OUT.log (the relay's
# output) and OUT.load (the load generator's). Environment: JAVA, JOPTS (more JVM flags), and
# OPENED (seconds after start from which to count, default 4.2: about when a relay with the
# port opens on a 2-core machine; the relay's own log says when).
set -euo pipefail
cd "$(dirname "$0")/../.."
jar=${1:?usage: jit-log.sh JAR OUT [SCENARIO...]} out=${2:?usage: jit-log.sh JAR OUT [SCENARIO...]}
shift 2
scenario=("$@"); [[ ${#scenario[@]} -gt 0 ]] || scenario=(mesh -n 10 --rate 100 --size 64)
port=$((20000 + RANDOM % 20000))
# shellcheck source=relay-run.sh
. crossbar-bench/scripts/relay-run.sh
JOPTS="${JOPTS:-} -XX:+UnlockDiagnosticVMOptions -XX:+LogCompilation -XX:LogFile=$out.xml" \
  start_relay "$jar" "$port" "$out.log"
trap 'kill $relay_pid 2>/dev/null || true' EXIT
start_load "$port" "$out.load" "${scenario[@]}"
wait "$load_pid" || true
kill "$relay_pid" 2>/dev/null || true
wait "$relay_pid" 2>/dev/null || true  # the JVM writes the compilers' logs into OUT.xml as it exits
grep '^ run' "$out.load" || tail -5 "$out.load"
python3 crossbar-bench/scripts/jit-summary.py "$out.xml" "${OPENED:-4.2}"

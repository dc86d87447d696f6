#!/usr/bin/env bash
# What each library an idle relay starts adds to its RSS (docs/benchmarks.md, Memory): a JVM with
# the README's flags (the JDK's own archive, not the relay's) starts the named parts as the relay
# uses them (IdleParts.java), then sleeps; its RSS is read 12 s after it is ready, after the
# README's 5 s trim of the C heap.
#
#   crossbar-bench/scripts/idle-parts.sh [RUNS] [PARTS...]
#
# PARTS default to the rows of docs/benchmarks.md's table: none, each library alone, then
# together. Needs the relay's jar (./mvnw -B -ntp -q package -DskipTests). Each line: the parts,
# then the RSS in MiB of each run.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=relay-run.sh
source crossbar-bench/scripts/relay-run.sh
runs=${1:-3}
shift $(( $# > 0 ? 1 : 0 ))
parts=("$@")
[[ ${#parts[@]} -gt 0 ]] || parts=(none picocli logback micrometer micrometer,binders netty
  micrometer,binders,netty picocli,micrometer,binders,netty picocli,logback,micrometer,binders,netty)
jar=crossbar-server/target/crossbar.jar
classes=$(mktemp -d) out=$(mktemp)
trap 'rm -rf "$classes" "$out"' EXIT
javac -nowarn -d "$classes" -cp "$jar" crossbar-bench/scripts/IdleParts.java
for part in "${parts[@]}"; do
  line=$part
  for _ in $(seq "$runs"); do
    setsid env MALLOC_ARENA_MAX=2 java "${README_JVM_FLAGS[@]}" -cp "$jar:$classes" IdleParts "$part" \
      > "$out" 2>&1 < /dev/null &
    pid=$!
    for _ in $(seq 100); do grep -q ready "$out" && break; sleep 0.1; done
    grep -q ready "$out" || { cat "$out" >&2; kill "$pid"; exit 1; }
    sleep 12
    line+=" $(awk '/^Rss/ {printf "%.1f", $2 / 1024}' "/proc/$pid/smaps_rollup")"
    kill "$pid"; wait "$pid" 2> /dev/null || true
  done
  echo "$line"
done

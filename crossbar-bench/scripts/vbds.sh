#!/usr/bin/env bash
# VBDS's two tables (issue 16, "Lossless 1:N") reproduced with the load generator: one publisher,
# two subscribers, each checking every message (loss, merge, split, corruption), Crossbar spawned
# per run under setsid, once with --route '/**:slow=backpressure' (lossless) and once as started
# (the default, slow=drop), alternating the two run by run; relay CPU (utime+stime) and peak RSS
# from /proc. Builds nothing: it needs crossbar-server/target/crossbar.jar and
# crossbar-bench/target/benchmarks.jar (mvn -B -ntp -q -pl crossbar-bench -am package -DskipTests).
#
#   crossbar-bench/scripts/vbds.sh [OUT] [REPEATS] [CASE-FILTER-REGEX]
#
# OUT defaults to crossbar-bench/target/vbds.jsonl (appended to; one JSON line per run), REPEATS
# to 3. Then the markdown tables, ours beside VBDS's published figures, are printed (and can be
# printed again from OUT: python3 crossbar-bench/scripts/vbds_table.py OUT).
#
# Cases (names are topics; the filter matches them):
#   file-75MB, file-640MB, file-1GB   files as 1 MiB messages (75, 640 and 1,024 of them), sent back
#                                     to back; files/s = messages/s per subscriber / messages per file
#   img2-W, img4-W (W in IMAGE_SIDES) a WxW image, one message: W*W*2 bytes, or W*W*4 plus a 16 KiB
#                                     FITS-like header; images/s per subscriber, latency mean and p99
#   lat4-512, lat4-2048               VBDS's latency rows: one image in flight at a time (--window 1),
#                                     so the latency is an image's own, not a full queue's
# Throughput cases: the publisher sends as fast as its socket takes (--rate 100000 --window 0: never
# limited by the generator, only by TCP and, with backpressure, by the relay no longer reading it).
# Environment (all optional):
#   DURATION       measured time per image run (default 3s); FILE_DURATION per file run (default 5s)
#   WARMUP         traffic before measuring (default 1s)
#   FILE_1GB_REPEATS  repeats of the 1 GB file (default REPEATS)
#   IMAGE_SIDES    default "48 128 256 512 1024 2048 4096"
#   CROSSBAR_SPAWN the relay's command, with {port} (default below: 80 MiB messages, 1 GiB direct memory)
#   LOAD_JAVA      the generator's JVM options (default -Xms256m -Xmx2g -XX:+UseParallelGC)
# How long: a run is warm-up + duration + about 3 s (relay start, connect, drain, close): with the
# defaults, 19 cases x 2 modes x 3 repeats = 114 runs, 13-15 minutes. Quiet machine only.
set -euo pipefail
cd "$(dirname "$0")/../.."

OUT="${1:-crossbar-bench/target/vbds.jsonl}"
REPEATS="${2:-3}"
FILTER="${3:-.}"
DURATION="${DURATION:-3s}"
FILE_DURATION="${FILE_DURATION:-5s}"
WARMUP="${WARMUP:-1s}"
FILE_1GB_REPEATS="${FILE_1GB_REPEATS:-$REPEATS}"
IMAGE_SIDES="${IMAGE_SIDES:-48 128 256 512 1024 2048 4096}"
# (A default in its own variable: a '}' inside ${VAR:-...} would end the expansion at {port}.)
default_crossbar='env MALLOC_ARENA_MAX=2 java -Xms64m -Xmn12m -Xmx256m -XX:MaxDirectMemorySize=1g -XX:+UseSerialGC -XX:-UsePerfData -XX:TrimNativeHeapInterval=5000 -Dio.netty.leakDetection.level=disabled -jar crossbar-server/target/crossbar.jar --listen 127.0.0.1:{port} --max-message 80MiB'
CROSSBAR_SPAWN="${CROSSBAR_SPAWN:-$default_crossbar}"
read -r -a LOAD_JVM <<< "${LOAD_JAVA:--Xms256m -Xmx2g -XX:+UseParallelGC}"
LOAD=(java "${LOAD_JVM[@]}" -cp crossbar-bench/target/benchmarks.jar dev.crossbar.bench.load.LoadMain)
FITS_HEADER=16384
MIB=1048576

for f in crossbar-server/target/crossbar.jar crossbar-bench/target/benchmarks.jar; do
  [[ -f $f ]] || { echo "vbds.sh: $f missing (build first: mvn -B -ntp -q -pl crossbar-bench -am package -DskipTests)" >&2; exit 2; }
done

SATURATE="--rate 100000 --window 0"
# name|message bytes|duration|repeats|pace
CASES=()
for spec in 75MB 640MB 1GB; do
  reps=$REPEATS; [[ $spec == 1GB ]] && reps=$FILE_1GB_REPEATS
  CASES+=("file-$spec|$MIB|$FILE_DURATION|$reps|$SATURATE")
done
for bpp in 2 4; do
  for w in $IMAGE_SIDES; do
    bytes=$((w * w * bpp)); [[ $bpp == 4 ]] && bytes=$((bytes + FITS_HEADER))
    CASES+=("img$bpp-$w|$bytes|$DURATION|$REPEATS|$SATURATE")
  done
done
for w in 512 2048; do
  CASES+=("lat4-$w|$((w * w * 4 + FITS_HEADER))|$DURATION|$REPEATS|--rate 0 --window 1")
done

mkdir -p "$(dirname "$OUT")"
LOG="${OUT%.jsonl}.log"
echo "# vbds.sh $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo ?) load $(cut -d' ' -f1-3 /proc/loadavg) cores $(nproc) repeats $REPEATS (1GB: $FILE_1GB_REPEATS) duration $DURATION files $FILE_DURATION warmup $WARMUP" | tee -a "$LOG"

i=0
for ((rep = 1; rep <= REPEATS; rep++)); do
  for c in "${CASES[@]}"; do
    IFS='|' read -r name bytes dur reps pace <<< "$c"
    [[ $name =~ $FILTER ]] || continue
    ((rep <= reps)) || continue
    # Alternate which mode goes first, run by run, so neither always runs on a warmer machine.
    if ((i++ % 2 == 0)); then modes=(backpressure drop); else modes=(drop backpressure); fi
    for mode in "${modes[@]}"; do
      echo "== rep $rep $name ($bytes B) slow=$mode" | tee -a "$LOG"
      # A run's phases are bounded by the generator; the timeout only catches a hung JVM.
      # shellcheck disable=SC2086 # $pace is several flags
      if ! timeout 180 "${LOAD[@]}" fanout -n 2 --size "$bytes" $pace \
          --warmup "$WARMUP" --duration "$dur" --drain 10s --topic "$name" --label crossbar \
          --slow "$mode" --spawn "$CROSSBAR_SPAWN" --json "$OUT" >> "$LOG" 2>&1; then
        echo "vbds.sh: run failed: rep $rep $name $mode (see $LOG)" >&2
      fi
    done
  done
done

python3 crossbar-bench/scripts/vbds_table.py "$OUT"

# Sourced by the scripts that start a relay of their own (cpu-split.sh, relay-accounting.sh and
# others): one relay started as deployed, and the load generator against it, the same way for all.
#
#   start_relay tokio|uws|JAR PORT LOG  the relay in its own session (setsid); sets relay_pid and
#                                    returns once PORT accepts connections (at most 20 s)
#   start_load PORT OUT SCENARIO...  the load generator, 5 s of warm-up and 8 s measured, in the
#                                    background (its table to OUT); sets load_pid
#   per_call_events                  perf tracepoints, one for each system call of a relay's hot path
#
#   README_JVM_FLAGS                 the README's JVM flags but the archive, for scripts that start
#                                    a JVM of their own as the relay's (idle-parts.sh)
#
# JAR gets the README's run command plus --max-connections-per-address 20000, as compare.sh
# starts it; JAVA (default java) and JOPTS (extra JVM flags) apply. "tokio" and "uws" are the peers
# that compare.sh built in PEERS_BUILD (default /tmp/crossbar-peers).

README_JVM_FLAGS=(-Xms64m -Xmn12m -Xmx256m -XX:MaxDirectMemorySize=256m -XX:+UseSerialGC -XX:-UsePerfData
  -XX:TrimNativeHeapInterval=5000 -Dio.netty.leakDetection.level=disabled)

start_relay() {
  local relay=$1 port=$2 log=$3
  if [[ $relay == tokio ]]; then
    setsid env LISTEN=127.0.0.1:$port "${PEERS_BUILD:-/tmp/crossbar-peers}/rust-target/release/rust-tokio-relay" \
      > "$log" 2>&1 &
  elif [[ $relay == uws ]]; then
    setsid env LISTEN=127.0.0.1:$port "${PEERS_BUILD:-/tmp/crossbar-peers}/uws-relay" > "$log" 2>&1 &
  else
    # shellcheck disable=SC2086 # JOPTS is a list of flags
    setsid env MALLOC_ARENA_MAX=2 "${JAVA:-java}" "${README_JVM_FLAGS[@]}" -XX:SharedArchiveFile="${relay%.jar}.jsa" \
      ${JOPTS:-} -jar "$relay" --listen 127.0.0.1:$port --max-connections-per-address 20000 > "$log" 2>&1 &
  fi
  relay_pid=$!
  for _ in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$port) 2> /dev/null && break; sleep 0.2; done
}

start_load() {
  local port=$1 out=$2
  shift 2
  java -Xms1g -Xmx1g -XX:+UseParallelGC -cp crossbar-bench/target/benchmarks.jar dev.crossbar.bench.load.LoadMain \
    --url ws://127.0.0.1:$port --pid "$relay_pid" "$@" --warmup 5s --duration 8s > "$out" 2>&1 &
  load_pid=$!
}

per_call_events() {
  local call
  for call in read recvfrom write writev sendto sendmsg epoll_wait epoll_pwait epoll_pwait2 futex; do
    echo -n ",syscalls:sys_enter_$call"
  done
}

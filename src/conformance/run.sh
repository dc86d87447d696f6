#!/usr/bin/env bash
# WebSocket conformance through the relay: Autobahn|Testsuite 0.8.2's fuzzing client talks to the
# relay on an N:N topic where an independent echo peer (echo.mjs, the `ws` package) sends every
# message back. Cases 12.* and 13.* (permessage-deflate, which the relay does not negotiate) are
# left out. See README.md for what each run checks.
#
#   src/conformance/run.sh [--build] [--cases '7.*,9.1.6']
#
# --build   runs `./mvnw -B -ntp -q package -DskipTests` first (also done when the jar is missing)
# --cases   runs only these cases in the default-limits run, and skips the --max-message run
#
# Environment: PYTHON27 (default: pyenv's 2.7.18), CONFORMANCE_WORK (default: src/conformance/target:
# virtualenv, reports, logs), CONFORMANCE_TIMEOUT (seconds per wstest run, default 300),
# CONFORMANCE_LEAK_LEVEL (the relay's Netty leak detection, default simple), CROSSBAR_JAR (another jar).
# Exit status: 0 when every case passed, 1 when one failed, 2 when the run itself could not be done.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORK=${CONFORMANCE_WORK:-$HERE/target}
VENV=$WORK/venv
JAR=${CROSSBAR_JAR:-$ROOT/crossbar-server/target/crossbar.jar}
PYTHON27=${PYTHON27:-$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")/versions/2.7.18/bin/python}
RUN_TIMEOUT=${CONFORMANCE_TIMEOUT:-300}
# Last virtualenv that can create Python 2.7 environments is 20.21; this one is known to work.
VIRTUALENV_PIN='virtualenv==20.15.1'
# Above Autobahn's largest message (16 MiB, cases 9.1.6 and 9.2.6).
BIG_MAX_MESSAGE=20MiB
# 16 MiB messages at the default --max-message (10 MiB) must be refused with 1009.
TOO_BIG_CASES=(9.1.6 9.2.6)

build=false
cases=""
while [ $# -gt 0 ]; do
    case "$1" in
        --build) build=true ;;
        --cases) cases=$2; shift ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

started=$(date +%s)
install_seconds=0
pids=()

# Stops a process we started: TERM, up to 5 s, then KILL.
stop() {
    local pid=$1
    kill "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local status=$?
    for pid in "${pids[@]}"; do
        stop "$pid"
    done
    local total=$(( $(date +%s) - started ))
    echo "wall time: ${total} s (install ${install_seconds} s, runs $(( total - install_seconds )) s)"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits up to $2 seconds for command $1 to succeed.
await() {
    local check=$1 seconds=$2
    for _ in $(seq $(( seconds * 10 ))); do
        if eval "$check"; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

install() {
    local t0
    t0=$(date +%s)
    if [ ! -x "$VENV/bin/wstest" ] || ! cmp -s "$HERE/requirements.txt" "$VENV/requirements.txt"; then
        echo "installing Autobahn|Testsuite into $VENV"
        [ -x "$PYTHON27" ] || { echo "no Python 2.7 at $PYTHON27 (set PYTHON27)" >&2; exit 2; }
        rm -rf "$VENV" "$WORK/virtualenv-boot"
        mkdir -p "$WORK"
        "$PYTHON27" -m pip install -q --disable-pip-version-check --target "$WORK/virtualenv-boot" "$VIRTUALENV_PIN" 2>&1 \
            | grep -v 'DEPRECATION: Python 2.7' || true
        PYTHONPATH="$WORK/virtualenv-boot" "$PYTHON27" -m virtualenv -q "$VENV"
        "$VENV/bin/pip" install -q --disable-pip-version-check -r "$HERE/requirements.txt" 2>&1 \
            | grep -v 'DEPRECATION: Python 2.7' || true
        [ -x "$VENV/bin/wstest" ] || { echo "wstest did not install" >&2; exit 2; }
        cp "$HERE/requirements.txt" "$VENV/requirements.txt"
    fi
    if [ ! -d "$HERE/node_modules/ws" ]; then
        (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
    fi
    install_seconds=$(( $(date +%s) - t0 ))
}

# run NAME "RELAY ARGS" 'CASES JSON' 'EXCLUDED JSON' [summarize.py args...]
run() {
    local name=$1 relay_args=$2 case_list=$3 excluded=$4
    shift 4
    local dir=$WORK/$name port relay status=0
    rm -rf "$dir"
    mkdir -p "$dir"
    port=$(free_port)

    # shellcheck disable=SC2086  # relay_args is a list of flags
    java -Xmx256m -XX:MaxDirectMemorySize=256m -Dio.netty.leakDetection.level=${CONFORMANCE_LEAK_LEVEL:-simple} \
        -jar "$JAR" --listen "127.0.0.1:$port" $relay_args >"$dir/relay.log" 2>&1 &
    relay=$!
    pids+=("$relay")
    if ! await "curl -sf -o /dev/null http://127.0.0.1:$port/healthz" 30; then
        echo "$name: relay did not start; $dir/relay.log:" >&2
        tail -20 "$dir/relay.log" >&2
        exit 2
    fi
    cat >"$dir/spec.json" <<EOF
{
  "outdir": "$dir/reports",
  "servers": [{"agent": "crossbar", "url": "ws://127.0.0.1:$port/autobahn"}],
  "cases": $case_list,
  "exclude-cases": $excluded,
  "exclude-agent-cases": {}
}
EOF
    echo "== $name: relay ${relay_args:-(defaults)}, cases $case_list except $excluded"
    local t0
    t0=$(date +%s)
    (cd "$dir" && timeout -k 10 "$RUN_TIMEOUT" "$VENV/bin/python" "$HERE/fuzz.py" spec.json node "$HERE/echo.mjs" \
        >wstest.log 2>&1) \
        || { echo "$name: wstest failed or timed out after ${RUN_TIMEOUT} s; $dir/wstest.log:" >&2
             tail -20 "$dir/wstest.log" >&2; status=2; }
    echo "$name: wstest took $(( $(date +%s) - t0 )) s; report $dir/reports/index.html"
    if grep -q '^echo: .*closed during the case' "$dir/wstest.log"; then
        echo "$name: the echo peer's connection ended during a case (the relay passed on something invalid?):" >&2
        grep '^echo: ' "$dir/wstest.log" >&2
        status=1
    fi
    stop "$relay"
    if grep -q 'LEAK:' "$dir/relay.log"; then
        echo "$name: the relay reported a buffer leak; $dir/relay.log" >&2
        status=1
    fi
    python3 "$HERE/summarize.py" "$dir/reports/index.json" "$@" || status=$(( status > $? ? status : $? ))
    return "$status"
}

install
if $build || [ ! -f "$JAR" ]; then
    (cd "$ROOT" && ./mvnw -B -ntp -q package -DskipTests)
fi

overall=0
if [ -n "$cases" ]; then
    json=$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1].split(",")))' "$cases")
    run selected "" "$json" '["12.*", "13.*"]' || overall=$?
else
    expect=()
    for c in "${TOO_BIG_CASES[@]}"; do
        expect+=(--expect-close "$c=1009")
    done
    run defaults "" '["*"]' '["12.*", "13.*"]' "${expect[@]}" || overall=$?
    big=$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "${TOO_BIG_CASES[@]}")
    run max-message "--max-message $BIG_MAX_MESSAGE" "$big" '[]' || overall=$(( overall > $? ? overall : $? ))
fi
exit "$overall"

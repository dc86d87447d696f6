#!/usr/bin/env bash
# Asks a Crossbar relay on this host for GET /healthz, saying what it answered on stdout (a 503's
# body names the stuck event loop or the cluster link). Only bash, through its /dev/tcp: no curl, so
# the container image and a bare VM need nothing more (docs/operations.md, "Health").
#
#   healthcheck.sh [HOST:PORT]                          exit 0 on 200, else 1
#   healthcheck.sh --ready-within SECONDS [HOST:PORT]   exit 0 once /healthz answers at all, 1 if
#                                                       it has not within SECONDS
#
# The first is the container's HEALTHCHECK: healthy means serving, cluster link included. The second
# is the systemd unit's ExecStartPost, which holds the unit in "activating" until the relay serves
# (about a second after the JVM starts): a 503 counts as started there, since a relay whose NATS is unreachable
# starts anyway and relays locally, and failing its start would only restart it in a loop.
#
# HOST:PORT is where /healthz is served: the --admin-listen address if there is one, else --listen's;
# default $HEALTHCHECK_ADDRESS, else 127.0.0.1:8080. Plain HTTP: with TLS on the main port, check a
# plain --admin-listen address. Each try gives up after 5 s without an answer: a request that lands
# on a stuck event loop gets none.
set -uo pipefail

wait_s=0
ready=200
if [ "${1:-}" = "--ready-within" ]; then
  wait_s="${2:?--ready-within needs SECONDS}"
  ready="200|503"
  shift 2
fi
address="${1:-${HEALTHCHECK_ADDRESS:-127.0.0.1:8080}}"
host="${address%:*}"
port="${address##*:}"
host="${host#[}"
host="${host%]}"
case "$address" in
  *:*) ;;
  *) port="" ;;
esac
case "$port" in
  '' | *[!0-9]*) echo "healthcheck: '$address' (expected: HOST:PORT)"; exit 2 ;;
esac

# One GET /healthz: prints the status code and the body's first line; true if the code is $ready.
probe() {
  local status="" line="" body=""
  if ! { exec 3<>"/dev/tcp/${host:-127.0.0.1}/$port"; } 2>/dev/null; then
    echo "connection refused"
    return 1
  fi
  printf 'GET /healthz HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$address" >&3
  if IFS=' ' read -r -t 5 _ status _ <&3; then
    # Headers end at an empty line; the body's first line is the reason.
    while IFS= read -r -t 5 line <&3 && [ -n "${line%$'\r'}" ]; do :; done
    IFS= read -r -t 5 body <&3
  fi
  exec 3<&-
  echo "${status:-no answer (5 s)} ${body%$'\r'}"
  [[ "$status" =~ ^($ready)$ ]]
}

# In microseconds (bash 5's clock): $SECONDS counts whole seconds and may tick at once.
now_us() { echo "${EPOCHREALTIME/[.,]/}"; }
deadline=$(($(now_us) + wait_s * 1000000))
while true; do
  if result="$(probe)"; then
    echo "healthz: ${result}"
    exit 0
  fi
  if [ "$(now_us)" -ge "$deadline" ]; then
    echo "healthz on ${address}: ${result}"
    exit 1
  fi
  sleep 0.5
done

#!/usr/bin/env bash
# Builds the peer relays of ../shared/peers outside the repository, for compare.sh (which calls
# it) and for anyone who wants to start them by hand:
#
#   crossbar-bench/scripts/build-peers.sh [PEER...]      PEER: tokio | node | uws (default: all three)
#
# The peers' sources are copied from PEERS_DIR (read only) to PEERS_BUILD and built there; nothing
# is written into the repository or PEERS_DIR. A peer is rebuilt only when its sources change.
#   tokio  cargo build --release --locked  -> PEERS_BUILD/rust-target/release/rust-tokio-relay
#   node   npm ci                          -> PEERS_BUILD/node-ws/relay.js (node_modules beside it)
#   uws    uws-cpp/build.sh UWS_SRC        -> PEERS_BUILD/uws-relay (one thread, uWebSockets' pub/sub)
# Start each with LISTEN=127.0.0.1:PORT in its environment (compare.sh does, under setsid).
#
# Environment:
#   PEERS_DIR    the peers' sources (default: ../shared/peers beside the repository)
#   PEERS_BUILD  where they are built (default /tmp/crossbar-peers; never the repository or PEERS_DIR)
#   UWS_SRC      for uws: an extracted uNetworking/uWebSockets tree with uNetworking/uSockets' tree
#                at UWS_SRC/uSockets (uWebSockets' submodule). A script cannot download them; from
#                git directories of the two repositories (clones, or mirrors fetched for you):
#                  UWS_GIT=/path/to/uWebSockets.git USOCKETS_GIT=/path/to/uSockets.git SRC=/tmp/uws-src
#                  mkdir -p "$SRC/uSockets"
#                  git --git-dir="$UWS_GIT" archive HEAD | tar x -C "$SRC"
#                  pin=$(git --git-dir="$UWS_GIT" ls-tree HEAD uSockets | awk '{print $3}')  # the submodule's commit
#                  git --git-dir="$USOCKETS_GIT" archive "$pin" | tar x -C "$SRC/uSockets"
#                (a clone's git directory is CLONE/.git; `git clone --bare URL DIR` makes one).
#                Without UWS_SRC, a uws-relay already in PEERS_BUILD is used as it is.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$(pwd -P)"
PEERS_DIR="${PEERS_DIR:-$ROOT/../shared/peers}"
PEERS_BUILD="${PEERS_BUILD:-/tmp/crossbar-peers}"
UWS_SRC="${UWS_SRC:-}"
peers=("$@")
[[ ${#peers[@]} -gt 0 ]] || peers=(tokio node uws)

inside() { # inside DIR PARENT: whether DIR is PARENT or below it
  [[ "$1/" == "$2/"* ]]
}

[[ -d "$PEERS_DIR" ]] || { echo "peers not found in $PEERS_DIR (set PEERS_DIR)" >&2; exit 2; }
src="$(cd "$PEERS_DIR" && pwd -P)"
# Checked before anything is made there (realpath -m: the path need not exist yet).
build="$(realpath -m "$PEERS_BUILD")"
if inside "$build" "$ROOT" || inside "$build" "$src"; then
  echo "PEERS_BUILD: '$build' (expected: outside the repository and PEERS_DIR, e.g. /tmp/crossbar-peers)" >&2
  exit 2
fi
for p in "${peers[@]}"; do
  case "$p" in
    tokio|node|uws) ;;
    *) echo "peer '$p' (expected: tokio, node or uws)" >&2; exit 2 ;;
  esac
done
mkdir -p "$build"

copy() { # copy DIR: the peer's sources into PEERS_BUILD, writable
  [[ -d "$src/$1" ]] || { echo "peer $1 not found in $src" >&2; exit 2; }
  mkdir -p "$build/$1"
  # -a keeps modification times, so cargo rebuilds only what changed; the copies must be writable.
  cp -a "$src/$1/." "$build/$1/"
  chmod -R u+w "$build/$1"
}

build_tokio() {
  copy rust-tokio
  echo "building the tokio peer in $build (cargo build --release --locked)"
  CARGO_TARGET_DIR="$build/rust-target" cargo build -q --release --locked --manifest-path "$build/rust-tokio/Cargo.toml"
}

build_node() {
  copy node-ws
  local stamp
  stamp="$(sha256sum "$build/node-ws/package-lock.json" | cut -d' ' -f1)"
  if [[ "$(cat "$build/node-ws/node_modules/.crossbar-lock-sha256" 2>/dev/null)" != "$stamp" ]]; then
    echo "installing the Node.js peer in $build (npm ci)"
    (cd "$build/node-ws" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$stamp" > "$build/node-ws/node_modules/.crossbar-lock-sha256"
  fi
}

build_uws() {
  copy uws-cpp
  if [[ -z "$UWS_SRC" ]]; then
    if [[ -x "$build/uws-relay" ]]; then
      echo "uws: using $build/uws-relay as built before (set UWS_SRC to rebuild)"
      return 0
    fi
    echo "uws: no $build/uws-relay and no UWS_SRC: set UWS_SRC to the uWebSockets sources (see the top of $0)" >&2
    exit 2
  fi
  [[ -f "$UWS_SRC/src/App.h" && -f "$UWS_SRC/uSockets/Makefile" ]] || {
    echo "UWS_SRC: '$UWS_SRC' (expected: a uWebSockets tree, src/App.h, with uSockets' tree at uSockets/; see the top of $0)" >&2
    exit 2; }
  # What the binary is built from: the relay, its build script and every source of the two libraries.
  local stamp
  stamp="$( (sha256sum "$build/uws-cpp/relay.cpp" "$build/uws-cpp/build.sh" | cut -d' ' -f1
             cd "$UWS_SRC" && find src uSockets/src uSockets/Makefile -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1)"
  if [[ -x "$build/uws-relay" && "$(cat "$build/uws-relay.sha256" 2>/dev/null)" == "$stamp" ]]; then
    return 0
  fi
  echo "building the uWebSockets peer in $build (uws-cpp/build.sh; uSockets built in a copy of UWS_SRC)"
  # build.sh builds uSockets in place: a copy of its own, so UWS_SRC stays as given.
  rm -rf "$build/uws-src"
  mkdir -p "$build/uws-src"
  cp -a "$UWS_SRC/." "$build/uws-src/"
  chmod -R u+w "$build/uws-src"
  bash "$build/uws-cpp/build.sh" "$build/uws-src" "$build/uws-relay" > /dev/null
  echo "$stamp" > "$build/uws-relay.sha256"
}

for p in "${peers[@]}"; do
  case "$p" in
    tokio) build_tokio ;;
    node) build_node ;;
    uws) build_uws ;;
  esac
done

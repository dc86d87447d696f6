#!/usr/bin/env bash
# Runs everything CI runs (.ci/run is this script), on this machine:
#   1. build   ./mvnw verify: unit, integration, NATS cluster and (replayed) fuzz tests, with
#              paranoid leak detection; builds crossbar-server/target/crossbar.jar
#   2. browser the /stats page, JSMpeg joining live ffmpeg video, and the examples (examples/) coming
#              back after the relay restarts under them, in headless Chromium (src/e2e)
#   3. conformance  Autobahn|Testsuite through the relay (src/conformance)
#   4. fuzz    coverage-guided fuzzing of the route and wire parsers, 20 s per target
#   5. helm    the Helm chart (deploy/helm): helm lint and helm template, and what the manifests
#              promise (deploy/helm/check.sh); Helm is built with Go from the Go module proxy once
#   6. release scripts/release.sh rehearsed in a throwaway clone of HEAD (scripts/rehearse-release.sh)
#
# Before that it installs, from Debian's packages, what the tests start and is missing, saying
# what and why: nats-server, chromium, Node.js and npm, ffmpeg, python3, python3-venv, curl, systemd.
# As root it runs apt-get itself; otherwise through sudo if there is one, else it prints the command
# to run. A JDK 17+ is the one thing you bring (Maven comes with ./mvnw), and Go for the helm step.
#
#   ./test.sh [--skip build|browser|conformance|fuzz|helm|release]...   (repeatable)
#
# Exit status: 0 when everything passed; 2 when a prerequisite is missing; otherwise that of the
# step that failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

skip=" "
while [ $# -gt 0 ]; do
  case "$1" in
    --skip)
      case "${2:-}" in
        build|browser|conformance|fuzz|helm|release) skip+="$2 " ;;
        *) echo "--skip: '${2:-}' (expected: build, browser, conformance, fuzz, helm or release)" >&2; exit 2 ;;
      esac
      shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
runs() { [[ "$skip" != *" $1 "* ]]; }
say() { printf '==> %s\n' "$*"; }
have() { command -v "$1" >/dev/null 2>&1; }

export MAVEN_OPTS="${MAVEN_OPTS:-} -Xmx1g"
MVN=(./mvnw -B -ntp)

# --- The JDK: brought by the user -------------------------------------------------------------
java_major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1 || true)
if [ -z "$java_major" ] || [ "$java_major" -lt 17 ]; then
  echo "A JDK 17 or newer is needed (found: $(java -version 2>&1 | head -n 1 || echo none))." >&2
  echo "Debian: apt-get install openjdk-17-jdk-headless; or set JAVA_HOME to one." >&2
  exit 2
fi

# --- What the tests start: Debian packages, installed when missing ------------------------------
packages=()
reasons=()
want() { packages+=("$1"); reasons+=("  $1: $2"); }

node_major() {
  node --version 2>/dev/null | sed -n 's/^v\([0-9]*\).*/\1/p'
}
# Node.js 20+ (package.json engines); Debian 12's own is 18, so install it from apt only when the
# candidate is new enough, and say what to do otherwise.
node_problem=""
if runs browser || runs conformance; then
  if ! have node; then
    candidate=$(apt-cache policy nodejs 2>/dev/null | sed -n 's/^ *Candidate: \([0-9]*\).*/\1/p')
    if [ -n "$candidate" ] && [ "$candidate" -ge 20 ] 2>/dev/null; then
      want nodejs "the browser test and the conformance run's echo peer are Node.js programs"
      have npm || want npm "installs their dependencies (playwright-core, ws)"
    else
      node_problem="Node.js 20+ is needed (the browser test, the conformance echo peer); apt offers ${candidate:-none}: install it from https://nodejs.org, nodesource or nvm"
    fi
  elif [ "$(node_major)" -lt 20 ]; then
    node_problem="Node.js 20+ is needed; found $(node --version): install a newer one (nodesource, nvm)"
  elif ! have npm; then
    want npm "installs the Node.js tests' dependencies (playwright-core, ws)"
  fi
fi
if runs build; then
  have nats-server || [ -x /usr/sbin/nats-server ] || want nats-server "the cluster tests start a three-node NATS cluster"
fi
if runs build || runs browser; then
  have ffmpeg || want ffmpeg "the live-video tests encode their test streams with it"
  have systemd-analyze || want systemd "DeploymentFilesIT checks the systemd unit with systemd-analyze verify"
fi
if runs browser; then
  [ -x "${CHROMIUM:-/usr/bin/chromium}" ] || have chromium || want chromium "the browser tests drive the /stats page, the JSMpeg player and the example pages in headless Chromium"
fi
if runs browser || runs conformance; then
  have python3 || want python3 "runs the Python examples; summarizes the Autobahn reports"
fi
if runs browser; then
  # Debian's python3 makes venvs only with python3-venv (ensurepip).
  { have python3 && python3 -c 'import ensurepip' 2>/dev/null; } || want python3-venv "the Python examples' tests install websockets into a venv (target/examples-venv)"
fi
if runs conformance; then
  have curl || want curl "the conformance run checks the relay is up with it"
fi

# Go builds Helm for the helm step (Debian's golang-go is too old for Helm 3.22: it needs Go 1.24+).
if runs helm && [ -z "${HELM:-}" ] && ! have go; then
  if [ -x /usr/local/go/bin/go ]; then
    PATH="$PATH:/usr/local/go/bin"
  else
    echo "The helm step builds Helm with Go 1.24 or newer, not found: install it from https://go.dev/dl" >&2
    echo "(or set HELM=/path/to/helm, or run ./test.sh --skip helm)." >&2
    exit 2
  fi
fi

if [ -n "$node_problem" ]; then
  echo "$node_problem (or: ./test.sh --skip browser --skip conformance)." >&2
  exit 2
fi

if [ ${#packages[@]} -gt 0 ]; then
  say "installing what the tests need: ${packages[*]}"
  printf '%s\n' "${reasons[@]}"
  install_cmd=(apt-get install -y --no-install-recommends "${packages[@]}")
  if ! have apt-get; then
    echo "No apt-get here: install ${packages[*]} with this system's package manager, then run again." >&2
    exit 2
  elif [ "$(id -u)" -eq 0 ]; then
    apt-get update
    "${install_cmd[@]}"
  elif have sudo; then
    echo "not root: running apt-get through sudo"
    sudo apt-get update
    sudo "${install_cmd[@]}"
  else
    echo "Not root and no sudo: as root, run" >&2
    echo "  apt-get update && ${install_cmd[*]}" >&2
    echo "then ./test.sh again (or --skip the steps that need them)." >&2
    exit 2
  fi
fi

# Autobahn|Testsuite runs on Python 2.7, which Debian no longer packages: src/conformance/run.sh
# takes pyenv's 2.7.18 or PYTHON27. Checked here so a missing one fails before the long build.
if runs conformance; then
  python27=${PYTHON27:-$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")/versions/2.7.18/bin/python}
  if [ ! -x "$python27" ]; then
    echo "The conformance run needs Python 2.7 (Autobahn|Testsuite), not found at $python27:" >&2
    echo "install it with pyenv (pyenv install 2.7.18) or set PYTHON27=/path/to/python2.7," >&2
    echo "or run ./test.sh --skip conformance." >&2
    exit 2
  fi
fi

step_started=0
begin() { step_started=$(date +%s); say "$1"; }
done_step() { say "$1 passed in $(( $(date +%s) - step_started )) s"; }

# --- 1. The build with every Java test ------------------------------------------------------------
if runs build; then
  begin "build: ./mvnw verify (unit, integration, cluster, replayed fuzz inputs; paranoid leak detection)"
  "${MVN[@]}" verify
  done_step build
fi

# --- 2. The /stats page, JSMpeg on live video and the examples in a real browser ----------------
# Debian's chromium, driven by playwright-core from npm, against the fat jar the build produced
# (src/e2e/README.md); the video tests' camera is Debian's ffmpeg. The examples' own dependencies:
# examples/browser's from npm (JSMpeg, xterm.js), examples/python's from PyPI into a venv.
if runs browser; then
  begin "browser: the /stats page, JSMpeg on live video and the examples in headless Chromium (src/e2e)"
  [ -f crossbar-server/target/crossbar.jar ] || "${MVN[@]}" -q package -DskipTests
  (cd examples/browser && npm ci --no-audit --no-fund)
  [ -x target/examples-venv/bin/python ] || python3 -m venv target/examples-venv
  target/examples-venv/bin/pip install -q --disable-pip-version-check -r examples/python/requirements.txt
  (cd src/e2e && npm ci --no-audit --no-fund && node --test)
  done_step browser
fi

# --- 3. WebSocket conformance ---------------------------------------------------------------------
# Autobahn|Testsuite 0.8.2 (every case but compression) through the relay, an independent echo
# client on the other end of each case's topic; any failed case fails (src/conformance/README.md).
# Installs into src/conformance/target on first use.
if runs conformance; then
  begin "conformance: Autobahn|Testsuite through the relay (src/conformance)"
  src/conformance/run.sh
  done_step conformance
fi

# --- 4. Coverage-guided fuzzing, 20 s per target ------------------------------------------------
# maxDuration in each @FuzzTest; Jazzer fuzzes one target per JVM, so each gets its own run. A
# finding fails and leaves a crash-* file in the target's seed directory
# (src/test/resources/.../<Target>Inputs/<method>/): commit it, and every later verify replays it
# as a regression input. A target that ran nothing (no fuzzing, e.g. JAZZER_FUZZ ignored, or no
# executions reported) fails too.
if runs fuzz; then
  begin "fuzz: route and wire parsers, 20 s per target"
  min_runs=100
  for target in crossbar-core:RouteParserFuzzTest crossbar-server:PreUpgradeFuzzTest crossbar-server:PostUpgradeFuzzTest; do
    name="${target#*:}"
    log="$(mktemp)"
    echo "fuzzing ${name} (bounded)"
    if ! JAZZER_FUZZ=1 "${MVN[@]}" -pl "${target%%:*}" -am test -Dtest="${name}" \
        -Dsurefire.failIfNoSpecifiedTests=false >"$log" 2>&1; then
      grep -E 'ERROR|FuzzTestFinding|crash-|Test unit written' "$log" | head -n 60
      echo "fuzzing ${name}: FAILED (full log: $log); commit the crash-* input above once understood"
      exit 1
    fi
    # libFuzzer ends each fuzzing run with "Done <n> runs in <s> second(s)".
    runs_done="$(grep -oE 'Done [0-9]+ runs' "$log" | awk '{ if (min == "" || $2 < min) min = $2 } END { print min + 0 }')"
    if grep -q 'No fuzzing has been performed' "$log" || [ "$runs_done" -lt "$min_runs" ]; then
      tail -n 40 "$log"
      echo "fuzzing ${name}: ran ${runs_done} inputs (expected: >= ${min_runs}); nothing was fuzzed (full log: $log)"
      exit 1
    fi
    echo "fuzzing ${name}: ${runs_done} inputs at least per run, no findings"
    rm -f "$log"
  done
  done_step fuzz
fi

# --- 5. The Helm chart ------------------------------------------------------------------------------
# helm lint --strict and helm template over the ways of installing it, and checks of the rendered
# manifests (deploy/helm/check.sh); no cluster needed. The first run builds Helm (see the script).
if runs helm; then
  begin "helm: lint and render the chart (deploy/helm)"
  deploy/helm/check.sh
  done_step helm
fi

# --- 6. A release, rehearsed -----------------------------------------------------------------------
# scripts/release.sh in a throwaway clone of HEAD (committed work only), without its tests (the build
# step ran them): tag, versions, changelog, the jar's --version and SHA-256 (docs/release.md).
if runs release; then
  begin "release: scripts/release.sh rehearsed in a throwaway clone"
  scripts/rehearse-release.sh
  done_step release
fi

if [ "$skip" = " " ]; then
  say "everything passed"
else
  say "everything else passed (skipped:${skip% })"
fi

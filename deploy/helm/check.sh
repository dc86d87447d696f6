#!/usr/bin/env bash
# Lints and renders the Helm chart (deploy/helm/crossbar) the ways an operator installs it, and
# checks what the rendered manifests promise: probes on /healthz, a non-root read-only container,
# the configuration file from values, NATS when asked for, and a clear refusal for a values file
# that cannot work. ./test.sh's helm step runs it.
#
# Helm itself: $HELM if set; else Helm $HELM_VERSION built from the Go module proxy with Go
# (`go install`, once: ~5 min on 2 cores with empty Go caches, ~30 s with warm ones, then reused
# from Go's bin directory, $GOBIN or $(go env GOPATH)/bin).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

HELM_VERSION=v3.22.0
CHART=crossbar

# A helm that go built at $HELM_VERSION (its module version is in the binary).
built_helm() {
  local h="$1"
  [ -x "$h" ] && go version -m "$h" 2>/dev/null | grep -qE "^\s+mod\s+helm\.sh/helm/v3\s+${HELM_VERSION}\s"
}
if [ -z "${HELM:-}" ]; then
  if ! command -v go >/dev/null 2>&1; then
    echo "Go is needed to build Helm (Debian: apt-get install golang-go), or set HELM=/path/to/helm." >&2
    exit 2
  fi
  gobin="$(go env GOBIN)"
  HELM="${gobin:-$(go env GOPATH)/bin}/helm"
  if ! built_helm "$HELM"; then
    echo "building Helm ${HELM_VERSION} with go install (once)"
    started=$(date +%s)
    go install "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
    echo "built Helm in $(( $(date +%s) - started )) s: $HELM"
  fi
fi

failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
# The YAML block of one key in a manifest: its line and the more indented ones after it.
block() { awk -v key="$1:" '
  index($0, key) && !found { found = 1; match($0, /^ */); indent = RLENGTH; print; next }
  found { match($0, /^ */); if (RLENGTH <= indent && $0 !~ /^ *$/) exit; print }'; }
expect() { # expect NAME TEXT PATTERN: TEXT has a line matching PATTERN
  grep -qE -- "$3" <<<"$2" || fail "$1: no line matches '$3' in:"$'\n'"$2"
}
expect_not() {
  ! grep -qE -- "$3" <<<"$2" || fail "$1: a line matches '$3'"
}
render() { "$HELM" template relay "$CHART" "$@"; }
show() { local t="$1"; shift; render --show-only "templates/$t" "$@"; }

# --- helm lint, strict, for each way of installing -----------------------------------------------
lint_sets=(
  ""                                                             # defaults: 2 relays, 3 NATS servers
  "--set nats.enabled=false --set replicaCount=1"                # one relay on its own
  "--set nats.enabled=false --set config.nats=nats://nats.messaging:4222"   # your own NATS
  "--set config.admin-listen=0.0.0.0:9090 --set existingSecret=crossbar-secrets"
)
for set in "${lint_sets[@]}"; do
  # shellcheck disable=SC2086 # each entry is several words on purpose
  "$HELM" lint --strict --quiet "$CHART" $set >/dev/null || { "$HELM" lint --strict "$CHART" $set; fail "helm lint $set"; }
done

# --- Defaults: relays joined through the chart's NATS --------------------------------------------
all=$(render)
expect "defaults" "$all" '^kind: StatefulSet$'
expect "defaults" "$all" '^kind: PodDisruptionBudget$'
config=$(show configmap.yaml)
expect "config file" "$config" '^    nats: nats://relay-crossbar-nats:4222$'
deploy=$(show deployment.yaml)
expect "config flag" "$deploy" 'args: \["--config", "/etc/crossbar/crossbar.yaml"\]'
expect "readiness" "$(block readinessProbe <<<"$deploy")" 'path: /healthz'
# With a cluster link, /healthz's 503 for a lost link must not restart the relays.
expect "liveness with NATS" "$(block livenessProbe <<<"$deploy")" 'tcpSocket:'
expect_not "liveness with NATS" "$(block livenessProbe <<<"$deploy")" 'httpGet:'
expect "startup" "$(block startupProbe <<<"$deploy")" 'tcpSocket:'
pod_security=$(block securityContext <<<"$deploy")
expect "pod security" "$pod_security" 'runAsNonRoot: true'
expect "pod security" "$pod_security" 'runAsUser: 10001'
expect "container security" "$deploy" 'readOnlyRootFilesystem: true'
expect "container security" "$deploy" 'allowPrivilegeEscalation: false'
expect "writable /tmp for the native libraries" "$deploy" 'mountPath: /tmp'
expect "resources" "$(block resources <<<"$deploy")" 'memory: 1Gi'
expect "rolling" "$deploy" 'maxUnavailable: 0'
expect "config checksum" "$deploy" 'checksum/config: [0-9a-f]{64}'
nats=$(show nats.yaml)
expect "NATS routes" "$nats" '--routes=nats://relay-crossbar-nats-0\.relay-crossbar-nats-cluster:6222,nats://relay-crossbar-nats-1\.relay-crossbar-nats-cluster:6222,nats://relay-crossbar-nats-2\.relay-crossbar-nats-cluster:6222$'
expect "NATS non-root" "$nats" 'runAsNonRoot: true'

# --- One relay on its own, with routes from values ------------------------------------------------
one=(--set nats.enabled=false --set replicaCount=1 --set-json 'config.route=["/cam/**:start=keyframe","/sensor/**:start=last"]')
all=$(render "${one[@]}")
expect_not "no NATS" "$all" '^kind: StatefulSet$'
expect_not "one relay, no disruption budget" "$all" '^kind: PodDisruptionBudget$'
config=$(show configmap.yaml "${one[@]}")
expect "routes in the config file" "$config" '^    - /cam/\*\*:start=keyframe$'
expect_not "no nats key" "$config" 'nats:'
deploy=$(show deployment.yaml "${one[@]}")
# On its own, a 503 can only be a stuck event loop: restart it.
expect "liveness on its own" "$(block livenessProbe <<<"$deploy")" 'path: /healthz'
expect "config checksum follows the config" "$deploy" 'checksum/config'
[ "$(show deployment.yaml "${one[@]}" | grep checksum)" != "$(show deployment.yaml --set nats.enabled=false --set replicaCount=1 | grep checksum)" ] \
  || fail "the config checksum does not change with the config"

# --- The admin address: probes follow /healthz there ---------------------------------------------
deploy=$(show deployment.yaml --set config.admin-listen=0.0.0.0:9090)
expect "admin port" "$deploy" 'containerPort: 9090'
expect "readiness on the admin port" "$(block readinessProbe <<<"$deploy")" 'port: admin'

# --- Values that cannot work are refused, saying why ----------------------------------------------
refused() { # refused NAME PATTERN ARGS...: rendering fails with a message matching PATTERN
  local name="$1" pattern="$2" out
  shift 2
  if out=$(render "$@" 2>&1); then
    fail "$name: rendered, expected a refusal"
  else
    expect "$name" "$out" "$pattern"
  fi
}
refused "relays that cannot meet" 'replicaCount > 1 needs the cluster link' --set nats.enabled=false
refused "listen in the file" 'config.listen: set containerPort instead' --set config.listen=0.0.0.0:80
refused "two NATS" 'config.nats: with nats.enabled' --set config.nats=nats://elsewhere:4222
refused "admin on loopback" 'config.admin-listen: a loopback address' --set config.admin-listen=127.0.0.1:9090

# --- The relay reads the chart's configuration file -----------------------------------------------
# The relay itself checks the rendered file (every key an option, every value valid) with --print-config.
jar=../../crossbar-server/target/crossbar.jar
if [ -f "$jar" ]; then
  file=$(mktemp)
  show configmap.yaml "${one[@]}" | awk '/crossbar.yaml: \|/ { on = 1; next } on { sub(/^    /, ""); print }' >"$file"
  java -jar "$jar" --config "$file" --print-config >/dev/null || fail "the relay refuses the chart's config file: $(cat "$file")"
  rm -f "$file"
else
  fail "no relay jar at $jar to read the chart's config file (build it first: ./mvnw -B -ntp package -DskipTests)"
fi

if [ "$failures" -gt 0 ]; then
  echo "helm chart: ${failures} check(s) failed"
  exit 1
fi
echo "helm chart: lint and every rendering check passed (Helm $("$HELM" version --short 2>/dev/null || echo "$HELM_VERSION"))"

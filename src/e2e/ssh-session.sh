#!/usr/bin/env bash
# The ssh example of docs/protocol.md ("Example: ssh through the relay"), run for real on loopback:
# a relay with a schema=session stream, an sshd of its own on 127.0.0.1, and the docs' own host
# agent and ProxyCommand, read out of docs/protocol.md (only the relay's address and sshd's port
# are replaced), so the docs cannot drift from what was run.
#
#   src/e2e/ssh-session.sh [path/to/crossbar.jar]
#
# Checks: ssh fails when the stream has no host, and ends when its host goes away (rather than
# hang); a command's output comes back; two clients at once get their own sessions; 10 MiB through
# `ssh ... cat` and back, and 10 MiB by scp, arrive byte for byte (sha256); with nats-server
# installed, a client on another node of a cluster reaches the host (the offer's url). Not part of
# ./test.sh: websocat is not in Debian's archive (`cargo install websocat --locked`, ~5 minutes on
# 2 cores). Exits 77 when websocat, sshd, ssh or jq is missing, 0 on success, 1 with the reason
# otherwise. Every wait is bounded; everything it starts is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."

JAR="${1:-crossbar-server/target/crossbar.jar}"
WEBSOCAT="${WEBSOCAT:-$(command -v websocat || echo "$HOME/.cargo/bin/websocat")}"
SSHD="${SSHD:-/usr/sbin/sshd}"
NATS_SERVER="${NATS_SERVER:-$(command -v nats-server || echo /usr/sbin/nats-server)}"
skip() { echo "skipped: $1 not installed ($2)"; exit 77; }
[[ -x "$WEBSOCAT" ]] || skip websocat "cargo install websocat --locked"
[[ -x "$SSHD" ]] || skip sshd "apt-get install openssh-server"
command -v ssh > /dev/null || skip ssh "apt-get install openssh-client"
command -v jq > /dev/null || skip jq "apt-get install jq"
[[ -f "$JAR" ]] || { echo "FAILED: no relay jar at $JAR (./mvnw -B -ntp -q package -DskipTests)"; exit 1; }
# The docs call plain `websocat`.
PATH="$(dirname "$WEBSOCAT"):$PATH"

work="$(mktemp -d)"
pids=()
cleanup() {
  # The agent runs in its own process group, so its per-session websocats go with it.
  [[ -n "${agent:-}" ]] && kill -- "-$agent" 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -f "$work/sshd.pid" ]] && kill "$(cat "$work/sshd.pid")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*"
  for log in relay.log relay-a.log agent.log; do
    [[ -s "$work/$log" ]] && { echo "--- $log"; tail -n 20 "$work/$log"; }
  done
  exit 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }

# The docs' example: the Nth ```sh block under its heading.
doc_block() {
  awk -v want="$1" '
    /^### Example: ssh through the relay/ { on = 1; next }
    on && /^##/ { exit }
    on && /^```sh$/ { n++; inb = (n == want); next }
    on && /^```$/ { if (inb) exit; next }
    inb { print }' docs/protocol.md
}

relay_port="$(free_port)"
ssh_port="$(free_port)"
relay="ws://127.0.0.1:$relay_port"

agent_sh="$(doc_block 1 | sed "s#ws://relay\.example\.org#$relay#g; s#tcp:127\.0\.0\.1:22 #tcp:127.0.0.1:$ssh_port #")"
proxy_doc="$(doc_block 2 | sed -n "s/.*ProxyCommand='\([^']*\)'.*/\1/p")"
[[ "$agent_sh" == *"$relay/in/shell/exp1"* && "$agent_sh" == *":$ssh_port "* \
   && "$proxy_doc" == *"ws://relay.example.org/out/shell/exp1"* ]] \
  || fail "docs/protocol.md's ssh example has not the shape this script reads" \
          "(host agent to ws://relay.example.org and tcp:127.0.0.1:22, then ssh -o ProxyCommand='...')"
proxy_via() { echo "${proxy_doc//ws:\/\/relay.example.org/$1}"; } # the docs' ProxyCommand, to this relay

# sshd: a throw-away host key and client key, this user only, loopback only.
ssh-keygen -q -t ed25519 -N '' -f "$work/hostkey"
ssh-keygen -q -t ed25519 -N '' -f "$work/userkey"
cp "$work/userkey.pub" "$work/authorized_keys"
chmod 600 "$work/authorized_keys"
# Subsystem sftp: OpenSSH 9's scp speaks SFTP.
cat > "$work/sshd_config" <<EOF
Port $ssh_port
ListenAddress 127.0.0.1
HostKey $work/hostkey
AuthorizedKeysFile $work/authorized_keys
PidFile $work/sshd.pid
PasswordAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
Subsystem sftp internal-sftp
EOF
mkdir -p /run/sshd 2>/dev/null || true
"$SSHD" -f "$work/sshd_config" -E "$work/sshd.log" || fail "sshd did not start: $(tail -n 3 "$work/sshd.log")"

# A short --session-open-timeout: in a cluster, a client with no host anywhere hears so only then.
start_relay() { # start_relay PORT LOG [ARGS...]: a relay with the docs' session stream
  local port="$1" log="$2"; shift 2
  java -Xms64m -Xmx256m -XX:+UseSerialGC -jar "$JAR" --listen "127.0.0.1:$port" \
    --route '/shell/**:schema=session' --session-open-timeout 3s "$@" > "$work/$log" 2>&1 &
  pids+=($!)
}
wait_healthy() { # wait_healthy PORT
  for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$1/healthz" > /dev/null 2>&1 && return 0
    sleep 0.2
  done
  return 1
}

# With nats-server, the relay is node b of a two-node cluster; clients of node a reach its hosts
# through the offer's url.
relay_a_port=""
if [[ -x "$NATS_SERVER" ]]; then
  nats_port="$(free_port)"
  "$NATS_SERVER" -a 127.0.0.1 -p "$nats_port" > "$work/nats.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 50); do (exec 3<> "/dev/tcp/127.0.0.1/$nats_port") 2> /dev/null && break; sleep 0.1; done
  relay_a_port="$(free_port)"
  start_relay "$relay_port" relay.log --node-name node-b --nats "nats://127.0.0.1:$nats_port"
  start_relay "$relay_a_port" relay-a.log --node-name node-a --nats "nats://127.0.0.1:$nats_port"
  wait_healthy "$relay_a_port" || fail "relay node-a did not start"
else
  start_relay "$relay_port" relay.log
fi
wait_healthy "$relay_port" || fail "the relay did not start"

ssh_via() { # ssh_via RELAY COMMAND...: one ssh session through that relay, with the docs' ProxyCommand
  timeout "${ssh_timeout:-60}" ssh -q -p "$ssh_port" -i "$work/userkey" \
    -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR \
    -o ProxyCommand="$(proxy_via "$1")" "$(whoami)@exp1" "${@:2}"
}
ssh_through() { ssh_via "$relay" "$@"; }

# No host yet: the relay closes the client (1013); ssh must give up rather than hang.
rc=0; ssh_timeout=15 ssh_through true 2> /dev/null || rc=$?
[[ $rc == 255 ]] || fail "ssh with no host on the stream: exit $rc (124: it hung; expected 255)"
echo "ok: no host: ssh fails rather than hang"

# The host agent of the docs, in its own process group (see cleanup).
setsid sh -c "$agent_sh" > "$work/agent.log" 2>&1 < /dev/null &
agent=$!
# The host is registered once the relay counts it (crossbar_session_hosts on /metrics).
host_registered() { curl -fsS "http://127.0.0.1:$relay_port/metrics" 2>/dev/null | grep -Eq '^crossbar_session_hosts(\{[^}]*\})? [1-9]'; }
for _ in $(seq 1 50); do host_registered && break; sleep 0.2; done
host_registered || fail "the host agent did not register"

out="$(ssh_through echo hello-through-crossbar)" || fail "ssh through the relay failed"
[[ "$out" == "hello-through-crossbar" ]] || fail "unexpected output: '$out'"
echo "ok: a command through the relay: $out"

# Two at once: each its own session (and its own sshd connection).
ssh_through 'sleep 1; echo one' > "$work/one" & a=$!
ssh_through 'sleep 1; echo two' > "$work/two" & b=$!
wait "$a" && wait "$b" || fail "two concurrent sessions"
[[ "$(cat "$work/one")" == one && "$(cat "$work/two")" == two ]] || fail "sessions mixed: $(cat "$work/one") / $(cat "$work/two")"
echo "ok: two clients at once, each its own session"

# 10 MiB through ssh and back (cat on the far side): byte for byte, both directions at once.
head -c $((10 * 1024 * 1024)) /dev/urandom > "$work/blob"
sent=$(sha256sum < "$work/blob" | cut -d' ' -f1)
start=$EPOCHREALTIME
ssh_through cat < "$work/blob" > "$work/back" || fail "10 MiB round trip"
took=$(elapsed "$start")
got=$(sha256sum < "$work/back" | cut -d' ' -f1)
[[ "$sent" == "$got" ]] || fail "10 MiB came back different ($(stat -c %s "$work/back") bytes)"
echo "ok: 10 MiB through ssh and back, sha256 equal ($sent), $took s"

# 10 MiB by scp (SFTP) to the host; sshd is on this machine, so the copy lands in $work.
start=$EPOCHREALTIME
timeout 60 scp -q -P "$ssh_port" -i "$work/userkey" \
  -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR \
  -o ProxyCommand="$(proxy_via "$relay")" "$work/blob" "$(whoami)@exp1:$work/blob.scp" \
  || fail "scp of 10 MiB"
took=$(elapsed "$start")
[[ "$(sha256sum < "$work/blob.scp" | cut -d' ' -f1)" == "$sent" ]] || fail "scp: the copy differs"
echo "ok: 10 MiB by scp, sha256 equal, $took s"

if [[ -n "$relay_a_port" ]]; then
  out="$(ssh_via "ws://127.0.0.1:$relay_a_port" echo hello-from-node-a)" || fail "ssh through node a to the host on node b"
  [[ "$out" == "hello-from-node-a" ]] || fail "unexpected output through node a: '$out'"
  echo "ok: a client on the other node of a cluster: $out"
else
  echo "skipped: the cluster check (nats-server not installed)"
fi

# The host goes away during a session: the relay closes the client (1001); ssh must end too.
ssh_timeout=20 ssh_through 'echo up; sleep 60' > "$work/up" 2> /dev/null & c=$!
for _ in $(seq 1 50); do [[ -s "$work/up" ]] && break; sleep 0.1; done
[[ -s "$work/up" ]] || fail "a session to outlive its host did not start"
kill -- "-$agent"; agent=""
rc=0; wait "$c" || rc=$?
[[ $rc == 255 ]] || fail "ssh whose host went away: exit $rc (124: it hung; expected 255)"
echo "ok: host gone: ssh ends rather than hang"
echo "passed"

#!/usr/bin/env bash
# The ssh example of docs/protocol.md ("Example: ssh through the relay"), run for real on loopback:
# a relay with a schema=session stream, an sshd of its own on 127.0.0.1, the host agent loop of the
# docs bridging each offered session to it, and ssh clients whose ProxyCommand is websocat.
#
#   src/e2e/ssh-session.sh [path/to/crossbar.jar]
#
# Checks: a command's output comes back; two clients at once get their own sessions; 10 MiB sent
# through ssh comes back byte for byte (sha256). Not part of ./test.sh: websocat is not in Debian's
# archive (`cargo install websocat --locked`, ~5 minutes on 2 cores). Exits 77 when websocat, sshd
# or jq is missing, 0 on success, 1 with the reason otherwise. Every wait is bounded; everything it
# starts is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."

JAR="${1:-crossbar-server/target/crossbar.jar}"
WEBSOCAT="${WEBSOCAT:-$(command -v websocat || echo "$HOME/.cargo/bin/websocat")}"
SSHD="${SSHD:-/usr/sbin/sshd}"
for tool in "$WEBSOCAT" "$SSHD" "$(command -v jq || echo jq-missing)"; do
  [[ -x "$tool" ]] || { echo "skipped: $tool not installed (websocat: cargo install websocat; apt-get install openssh-server jq)"; exit 77; }
done
[[ -f "$JAR" ]] || { echo "no relay jar at $JAR (./mvnw -B -ntp -q package -DskipTests)"; exit 1; }

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -f "$work/sshd.pid" ]] && kill "$(cat "$work/sshd.pid")" 2>/dev/null || true
  pkill -f "websocat.*127.0.0.1:$relay_port" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAILED: $*"; echo "--- relay log"; tail -n 20 "$work/relay.log" || true; echo "--- host agent log"; tail -n 20 "$work/agent.log" || true; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

relay_port="$(free_port)"
ssh_port="$(free_port)"
relay="ws://127.0.0.1:$relay_port"

# sshd: a throw-away host key and client key, this user only, loopback only.
ssh-keygen -q -t ed25519 -N '' -f "$work/hostkey"
ssh-keygen -q -t ed25519 -N '' -f "$work/userkey"
cp "$work/userkey.pub" "$work/authorized_keys"
chmod 600 "$work/authorized_keys"
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
EOF
mkdir -p /run/sshd 2>/dev/null || true
"$SSHD" -f "$work/sshd_config" -E "$work/sshd.log" || fail "sshd did not start (see $work/sshd.log)"

# The relay, with the session stream as the docs' example names it.
java -Xms64m -Xmx256m -XX:+UseSerialGC -jar "$JAR" --listen "127.0.0.1:$relay_port" \
  --route '/shell/**:schema=session' > "$work/relay.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$relay_port/healthz" > /dev/null 2>&1 && break
  sleep 0.2
done
curl -fsS "http://127.0.0.1:$relay_port/healthz" > /dev/null || fail "the relay did not start"

# The host agent, as in docs/protocol.md: for each offer, bridge its session to the local sshd.
# (-n and no input: the offers only come in; without -n, websocat closes the connection at the end
# of its input, and the host would be gone.)
(
  "$WEBSOCAT" -n --text "$relay/in/shell/exp1" < /dev/null | while read -r offer; do
    path=$(printf '%s' "$offer" | jq -r .session)
    "$WEBSOCAT" --binary "$relay$path" "tcp:127.0.0.1:$ssh_port" &
  done
) > "$work/agent.log" 2>&1 &
pids+=($!)
# The host is registered once the relay counts it (crossbar_session_hosts on /metrics).
for _ in $(seq 1 50); do
  curl -fsS "http://127.0.0.1:$relay_port/metrics" 2>/dev/null | grep -Eq '^crossbar_session_hosts(\{[^}]*\})? [1-9]' && break
  sleep 0.2
done
curl -fsS "http://127.0.0.1:$relay_port/metrics" | grep -Eq '^crossbar_session_hosts(\{[^}]*\})? [1-9]' \
  || fail "the host agent did not register"

ssh_through() { # ssh_through COMMAND...: one ssh session through the relay
  timeout 60 ssh -q -p "$ssh_port" -i "$work/userkey" \
    -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o ConnectTimeout=20 \
    -o ProxyCommand="$WEBSOCAT --binary $relay/out/shell/exp1" \
    "$(whoami)@exp1" "$@"
}

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
start=$(date +%s.%N)
ssh_through cat < "$work/blob" > "$work/back" || fail "10 MiB round trip"
end=$(date +%s.%N)
sent=$(sha256sum < "$work/blob" | cut -d' ' -f1)
got=$(sha256sum < "$work/back" | cut -d' ' -f1)
[[ "$sent" == "$got" ]] || fail "10 MiB came back different ($(stat -c %s "$work/back") bytes)"
printf 'ok: 10 MiB through ssh and back, sha256 equal, %.2f s\n' "$(echo "$end - $start" | bc)"
echo "passed"

// Echo peer for the conformance run (see README.md): an independent client (the `ws` package) that
// sends every message it receives back with the same type. Driven by fuzz.py over stdin/stdout:
//
//   stdin  "join ws://host:port/autobahn/7.9.1"   close the previous case's connection, open this one
//   stdout "joined <url>" once it is a member of the topic, or "failed <url> <reason>"
//
// "Member" is proven, not assumed: the relay joins a connection to its topic only after writing the
// 101, so a message sent right after the upgrade can miss it. A probe connection sends one marker
// message until the echo connection receives it (the marker is not echoed), and is closed (its close
// answered, so the relay has handled its messages) before "joined" is printed.
// It exits when stdin ends (the driver stopped), so it never outlives the run.
import WebSocket from 'ws';
import { createInterface } from 'node:readline';

const MARKER = 'crossbar-conformance: echo peer is on this topic';
const ATTEMPTS = 20;
const ATTEMPT_MILLIS = 250;

let current = null;
let echoed = 0;

function open(url) {
  // maxPayload above the largest case (16 MiB); the relay enforces its own limit first.
  return new WebSocket(url, { maxPayload: 64 * 1024 * 1024, perMessageDeflate: false });
}

/** Resolves when {@code ws} has closed, or after a bounded wait. */
function closed(ws) {
  return new Promise((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) {
      resolve();
      return;
    }
    const timer = setTimeout(() => {
      ws.terminate();
      resolve();
    }, 2000);
    ws.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** One probe: a connection sends the marker, waits for the echo connection to see it, closes. */
async function probe(url, echo) {
  const p = open(url);
  p.on('error', () => {});
  await new Promise((resolve) => p.once('open', resolve).once('close', resolve));
  if (p.readyState === WebSocket.OPEN) {
    p.send(MARKER);
    const deadline = Date.now() + ATTEMPT_MILLIS;
    while (!echo.sawMarker && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    p.close(1000);
  }
  await closed(p);
  return echo.sawMarker;
}

async function join(url) {
  if (current) {
    current.terminate();
  }
  const ws = open(url);
  current = ws;
  ws.sawMarker = false;
  ws.on('message', (data, isBinary) => {
    if (!isBinary && data.length === MARKER.length && data.toString() === MARKER) {
      ws.sawMarker = true;
      return;
    }
    echoed++;
    ws.send(data, { binary: isBinary });
  });
  ws.on('error', (err) => console.error(`echo: ${url}: ${err.message}`));
  ws.on('close', (code, reason) => {
    if (ws === current) {
      // Nothing should end the echo connection during its case: when it does, the relay closed it
      // or sent it something invalid (e.g. text that is not UTF-8). run.sh fails the run on this line.
      console.error(`echo: ${url}: closed during the case (${code} ${reason})`);
    }
  });
  await new Promise((resolve) => ws.once('open', resolve).once('close', resolve));
  for (let i = 0; i < ATTEMPTS && ws.readyState === WebSocket.OPEN; i++) {
    if (await probe(url, ws)) {
      console.log(`joined ${url}`);
      return;
    }
  }
  console.log(`failed ${url} not a member after ${ATTEMPTS} probes`);
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, url] = line.trim().split(/\s+/);
  if (command === 'join' && url) {
    join(url).catch((err) => console.log(`failed ${url} ${err.message}`));
  } else {
    console.error(`echo: unknown command: ${line}`);
  }
}).on('close', () => {
  console.error(`echo: stopping after ${echoed} messages`);
  process.exit(0);
});

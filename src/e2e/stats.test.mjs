// The /stats page in a real headless Chromium, against the real relay (the fat jar) with real
// WebSocket clients: rows for a live publisher and its subscribers, numbers that move, per-topic
// charts, client strings that stay text, topics grouped by routing rule with a search box and a
// filter, 1:1 sessions (counts, age, traffic, no content), the page at /stats/ too, client details
// truncated unless an admin token is given, a layout that fits a phone, reconnection after a relay
// restart, and the cluster view of two relays joined by Debian's nats-server.
//
// Run after `mvn -B -ntp verify` (which builds crossbar-server/target/crossbar.jar):
//   cd src/e2e && npm ci && node --test
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const JAR = path.join(ROOT, 'crossbar-server', 'target', 'crossbar.jar');
const SHOTS = path.join(ROOT, 'target');
// Debian's chromium; CHROMIUM overrides it for a machine that keeps it elsewhere.
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// Hostile strings: if the page ever parsed them as HTML, a script would run or an element appear.
const PUB_AGENT = 'lab-camera <script>window.__xss = "ua"</script>';
const EVIL_TOPIC = '/lab/<img src=x onerror="window.__xss=1">';
const EVIL_AGENT = '<img src=x onerror=window.__xss=2>';
const STREAM = 'cam1';
// The relay's routing table: the camera's stream keeps its last message, /shell/* are 1:1 sessions.
const RULES = ['--route', `/${STREAM}:start=last`, '--route', '/shell/*:schema=session'];
// What the shell's client types: it must never reach the page.
const TYPED = ['ls -l', 'whoami'];
// Access control for the restarted relay: an HS256 secret and audience, as the operator would pass them.
const SECRET = 'e2e-secret-0123456789abcdefghijklmnop';
const AUDIENCE = 'wss://relay.e2e';
const NATS = ['/usr/sbin/nats-server', '/usr/bin/nats-server'].find((p) => fs.existsSync(p)) || 'nats-server';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** An HS256 token for this test's relay (the JWT the relay's docs describe), valid for an hour. */
function token(claims) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const head = b64({ alg: 'HS256', typ: 'JWT' });
  const body = b64({ aud: AUDIENCE, iat: now, exp: now + 3600, jti: crypto.randomUUID(), ...claims });
  const sig = crypto.createHmac('sha256', SECRET).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${sig}`;
}

/** Starts the relay jar on 127.0.0.1:port (with extra flags) and waits until /healthz answers. */
async function startRelay(port, args = []) {
  const proc = spawn('java', ['-Xmx256m', '-XX:+UseSerialGC', '-jar', JAR, '--listen', `127.0.0.1:${port}`,
    '--stats-interval', '1s', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout.on('data', (d) => { log += d; });
  proc.stderr.on('data', (d) => { log += d; });
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  const deadline = Date.now() + 30000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`relay exited ${proc.exitCode}:\n${log}`);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (r.status === 200) return { proc, exited, log: () => log };
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  proc.kill('SIGKILL');
  throw new Error(`relay did not answer /healthz within 30s:\n${log}`);
}

async function stopRelay(relay) {
  if (!relay || relay.proc.exitCode !== null) return;
  relay.proc.kill('SIGTERM');
  const timeout = sleep(10000).then(() => 'timeout');
  if ((await Promise.race([relay.exited, timeout])) === 'timeout') relay.proc.kill('SIGKILL');
}

// onMessage is attached before the socket opens: a message that arrives with the upgrade's answer
// (a session's waiting messages do) is read before a caller awaiting 'open' could listen.
function client(port, p, agent, bearer, onMessage) {
  return new Promise((resolve, reject) => {
    const headers = { 'User-Agent': agent };
    if (bearer) headers.Authorization = `Bearer ${bearer}`;
    const ws = new WebSocket(`ws://127.0.0.1:${port}${p}`, { headers });
    if (onMessage) ws.on('message', (data, binary) => onMessage(ws, data, binary));
    ws.on('open', () => resolve(ws));
    ws.on('error', reject);
  });
}

function evilPath() {
  return '/' + EVIL_TOPIC.split('/').filter(Boolean).map(encodeURIComponent).join('/');
}

describe('/stats page in headless Chromium', () => {
  let port;
  let relay;
  let browser;
  let page;
  const sockets = [];
  const timers = [];
  const dialogs = [];
  const pageErrors = [];

  async function startTraffic() {
    const pub = await client(port, `/in/${STREAM}`, PUB_AGENT);
    const subs = [await client(port, `/out/${STREAM}`, 'viewer-1'), await client(port, `/out/${STREAM}`, 'viewer-2')];
    const evilA = await client(port, evilPath(), 'chat-member');
    const evilB = await client(port, evilPath(), EVIL_AGENT);
    const dark = await client(port, '/out/dark-cam', 'dark-viewer');
    sockets.push(pub, ...subs, evilA, evilB, dark);
    // A 1:1 session: a host that echoes what its client types, and a client typing two commands.
    const host = await client(port, '/in/shell/pi', 'shell-host');
    host.on('message', async (data) => {
      const offer = JSON.parse(data);
      if (offer.type !== 'session') return;
      const session = await client(port, offer.session, 'shell-host-session', undefined,
        (ws, d, binary) => ws.send(d, { binary }));
      sockets.push(session);
    });
    sockets.push(host);
    // After the host is registered: a client with no host gets 1013.
    await sleep(300);
    const shell = await client(port, '/out/shell/pi', 'shell-client');
    TYPED.forEach((t) => shell.send(t));
    sockets.push(shell);
    const frame = Buffer.alloc(1000, 7);
    timers.push(setInterval(() => pub.readyState === WebSocket.OPEN && pub.send(frame), 50));
    timers.push(setInterval(() => evilA.readyState === WebSocket.OPEN && evilA.send('{"angle":42}'), 200));
  }

  function stopTraffic() {
    timers.splice(0).forEach(clearInterval);
    sockets.splice(0).forEach((s) => s.terminate());
  }

  before(async () => {
    assert.ok(fs.existsSync(JAR), `${JAR} is missing: run mvn -B -ntp verify first`);
    port = await freePort();
    relay = await startRelay(port, RULES);
    await startTraffic();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
    await page.goto(`http://127.0.0.1:${port}/stats`);
  });

  after(async () => {
    stopTraffic();
    if (browser) await browser.close();
    await stopRelay(relay);
  });

  const row = (text) => page.locator('tr[data-client-id]', { hasText: text });

  it('shows a row for the live publisher and one for each subscriber', async () => {
    await row('lab-camera').waitFor({ timeout: 15000 });
    const section = page.locator(`section[data-topic="/out/${STREAM}"]`);
    assert.equal(await section.locator('tr[data-client-id]').count(), 3);
    assert.equal(await row('lab-camera').locator('td[data-field=role]').textContent(), 'publisher');
    for (const viewer of ['viewer-1', 'viewer-2']) {
      assert.equal(await row(viewer).locator('td[data-field=role]').textContent(), 'subscriber');
    }
    assert.match(await section.locator('h2').textContent(), /1 publisher · 2 subscribers/);
    assert.equal(await page.locator('#status').textContent(), 'live');
  });

  it('updates the numbers within about 6 seconds as traffic flows', async () => {
    const cell = row('viewer-1').locator('td[data-field=messages]');
    const before = await cell.textContent();
    const start = Date.now();
    let now = before;
    while (now === before && Date.now() - start < 7000) {
      await sleep(250);
      now = await cell.textContent();
    }
    const waited = Date.now() - start;
    assert.notEqual(now, before, `messages cell still '${before}' after ${waited} ms`);
    // The subscriber receives 20 messages/s; its rate cell shows a rate, not zero.
    const rate = await row('viewer-1').locator('td[data-field=out-rate]').textContent();
    assert.ok(parseFloat(rate) > 5, `subscriber out rate '${rate}'`);
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, 'stats-page.png'), fullPage: true });
  });

  it('renders a hostile topic and user agents as inert text', async () => {
    await row('chat-member').waitFor({ timeout: 10000 });
    const topicName = page.locator('section.topic h2 .name', { hasText: 'onerror' });
    assert.equal(await topicName.textContent(), EVIL_TOPIC);
    // Cut to the product name by default: what is left of the hostile agents is still text.
    assert.equal(await row('lab-camera').locator('td[data-field=user-agent]').textContent(), 'lab-camera');
    assert.equal(await row('<img').locator('td[data-field=user-agent]').textContent(), '<img');
    assert.equal(await page.locator('img').count(), 0, 'no <img> element may be created from client data');
    assert.equal(await page.locator('script').count(), 1, 'only the page\'s own script');
    assert.equal(await page.evaluate(() => window.__xss), undefined, 'no injected script ran');
    assert.deepEqual(dialogs, []);
    assert.deepEqual(pageErrors, [], 'no script errors and no CSP violations');
  });

  it('draws each topic\'s message rate and bytes out as a small chart', async () => {
    const section = page.locator(`section[data-topic="/out/${STREAM}"]`);
    // The publisher sends 20 messages/s; at a 1 s interval the chart has a few points within seconds.
    await page.waitForFunction((topic) => {
      const s = document.querySelector(`section[data-topic="${topic}"]`);
      const line = s && s.querySelector('svg[data-chart=rate-in] polyline');
      return line && line.getAttribute('points').split(' ').length >= 4;
    }, `/out/${STREAM}`, { timeout: 15000 });
    for (const chart of ['rate-in', 'bytes-out']) {
      const points = (await section.locator(`svg[data-chart=${chart}] polyline`).getAttribute('points')).split(' ');
      const ys = points.map((p) => parseFloat(p.split(',')[1]));
      // SVG y grows downwards: a live stream draws above the baseline (22).
      assert.ok(Math.min(...ys) < 12, `${chart} chart is flat for a live stream: ${points.join(' ')}`);
    }
    assert.match(await section.locator('svg[data-chart=rate-in] title').textContent(), /msgs in\/s over the last \d+ updates; peak/);
    fs.mkdirSync(SHOTS, { recursive: true });
    await section.screenshot({ path: path.join(SHOTS, 'stats-charts.png') });
    // A page opened now draws the recent past at once, from the relay's history in its first update.
    const fresh = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await fresh.goto(`http://127.0.0.1:${port}/stats`);
      const line = fresh.locator(`section[data-topic="/out/${STREAM}"] svg[data-chart=rate-in] polyline`);
      await line.waitFor({ timeout: 10000 });
      const points = (await line.getAttribute('points')).split(' ');
      assert.ok(points.length >= 4, `a page just opened has ${points.length} points`);
    } finally {
      await fresh.close();
    }
  });

  it('works at /stats/ (a trailing slash) too, reading the /ws socket', async () => {
    const slash = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const opened = [];
    slash.on('websocket', (ws) => opened.push(ws.url()));
    try {
      await slash.goto(`http://127.0.0.1:${port}/stats/`);
      await slash.locator('tr[data-client-id]', { hasText: 'lab-camera' }).waitFor({ timeout: 15000 });
      assert.equal(await slash.locator('#status').textContent(), 'live');
      assert.deepEqual(opened, [`ws://127.0.0.1:${port}/ws?format=snapshot`]);
    } finally {
      await slash.close();
    }
  });

  it('groups topics by their routing rule, with a search box and a filter', async () => {
    const groups = page.locator('details.group');
    await page.locator(`details.group section[data-topic="/out/${STREAM}"]`).waitFor({ timeout: 15000 });
    assert.equal(await groups.count(), 2, 'the camera\'s rule, and the topics without one');
    assert.equal(await groups.nth(0).getAttribute('data-rule'), `/${STREAM}:start=last`);
    assert.match(await groups.nth(0).locator('summary').textContent(), /rule \/cam1:start=last.*1 topic/);
    assert.match(await groups.nth(1).locator('summary').textContent(), /no rule: live, drop.*2 topics/);
    assert.equal(await groups.nth(1).locator('section[data-topic="/out/dark-cam"]').count(), 1);

    const shown = () => page.locator('section[data-topic]').evaluateAll((s) => s.map((e) => e.getAttribute('data-topic')).sort());
    await page.fill('#search', 'onerror');
    await page.waitForFunction(() => document.querySelectorAll('section[data-topic]').length === 1, null, { timeout: 5000 });
    assert.deepEqual(await shown(), [EVIL_TOPIC]);
    assert.equal(await page.locator('#count').textContent(), '1 of 3 topics');
    assert.match(page.url(), /[?&]q=onerror/);
    await page.fill('#search', '');

    await page.selectOption('#show', 'no-publisher');
    await page.waitForFunction(() => document.querySelectorAll('section[data-topic]').length === 1, null, { timeout: 5000 });
    assert.deepEqual(await shown(), ['/out/dark-cam'], 'a camera stream nobody publishes on');
    await page.selectOption('#show', 'quiet');
    await sleep(1500); // an update or two: the filter holds across them
    assert.deepEqual(await shown(), ['/out/dark-cam'], 'nothing in for a minute');
    await page.selectOption('#show', 'dropping');
    await page.locator('#topics p.empty', { hasText: 'No topic matches' }).waitFor({ timeout: 5000 });
    await page.selectOption('#show', 'all');
    await page.waitForFunction(() => document.querySelectorAll('section[data-topic]').length === 3, null, { timeout: 5000 });
    assert.doesNotMatch(page.url(), /show=/);
    await page.screenshot({ path: path.join(SHOTS, 'stats-groups.png'), fullPage: true });
  });

  it('shows 1:1 sessions: hosts, open sessions, their age and traffic, never what was typed', async () => {
    const stream = page.locator('section[data-session-stream="/shell/pi"]');
    await page.waitForFunction(() => {
      const c = document.querySelector('section[data-session-stream="/shell/pi"] tr[data-session] td[data-field=to-client]');
      return c && c.textContent.startsWith('2 msgs');
    }, null, { timeout: 15000 });
    assert.match(await stream.locator('h2').textContent(), /1 host · 0 waiting · 1 open/);
    const bytes = TYPED.reduce((n, t) => n + t.length, 0);
    assert.equal(await stream.locator('td[data-field=to-host]').textContent(), `2 msgs · ${bytes} B`);
    assert.equal(await stream.locator('td[data-field=to-client]').textContent(), `2 msgs · ${bytes} B`);
    assert.match(await stream.locator('td[data-field=age]').textContent(), /^\d+(m )?\d*s$/);
    assert.match(await page.locator('#sessions > h2').textContent(), /1:1 sessions.*1 open on 1 stream/);
    const text = await page.locator('body').textContent();
    for (const t of TYPED) assert.ok(!text.includes(t), `the page shows what was typed: ${t}`);
  });

  it('shows client addresses and user agents truncated, and says so', async () => {
    const addr = await row('viewer-1').locator('td[data-field=address]').textContent();
    assert.equal(addr, '127.0.0.0/24');
    assert.equal(await row('viewer-1').locator('td[data-field=user-agent]').textContent(), 'viewer-1');
    assert.equal(await page.locator('#privacy').getAttribute('data-details'), 'truncated');
    assert.match(await page.locator('#privacy').textContent(), /truncated \(IPv4 to \/24, IPv6 to \/48\)/);
    assert.equal(await page.locator('#scope').isVisible(), false, 'no scope toggle on a node on its own');
  });

  it('fits a phone screen without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await sleep(300);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `page is ${overflow}px wider than a 390px phone`);
    await page.screenshot({ path: path.join(SHOTS, 'stats-page-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('reconnects by itself when the relay restarts', async () => {
    stopTraffic();
    await stopRelay(relay);
    await page.waitForFunction(() => document.getElementById('status').className === 'down', null, { timeout: 10000 });
    // Back with access control on (statistics stay open to all, client details to admins only).
    relay = await startRelay(port, ['--auth-secret', SECRET, '--auth-audience', AUDIENCE]);
    const after = await client(port, '/lab/after-restart', 'after-restart/1.0 (e2e)',
      token({ topic: '/lab/after-restart', scope: 'read write' }));
    const evil = await client(port, '/lab/after-restart', EVIL_AGENT, token({ topic: '/lab/after-restart', scope: 'read write' }));
    sockets.push(after, evil);
    // Back-off is at most 10 s between attempts; the first snapshot comes on connect.
    await row('after-restart').waitFor({ timeout: 20000 });
    assert.equal(await page.locator('#status').textContent(), 'live');
    assert.equal(await row('lab-camera').count(), 0, 'the old relay\'s clients are gone');
    assert.equal(await row('after-restart').locator('td[data-field=user-agent]').textContent(), 'after-restart');
  });

  it('shows client details whole to a reader with an admin token, and says so', async () => {
    pageErrors.length = 0; // the restart above refused connections on purpose
    await page.goto(`http://127.0.0.1:${port}/stats?token=${token({ scope: 'admin' })}`);
    await row('after-restart').waitFor({ timeout: 15000 });
    assert.equal(await row('after-restart').locator('td[data-field=user-agent]').textContent(), 'after-restart/1.0 (e2e)');
    assert.match(await row('after-restart').locator('td[data-field=address]').textContent(), /^127\.0\.0\.1:\d+$/);
    assert.equal(await page.locator('#privacy').getAttribute('data-details'), 'full');
    // Whole, a hostile agent is still only text.
    assert.equal(await row('onerror=window').locator('td[data-field=user-agent]').textContent(), EVIL_AGENT);
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    // A token without the admin scope is no better than none.
    await page.goto(`http://127.0.0.1:${port}/stats?token=${token({ topic: '/out/x', scope: 'read' })}`);
    await row('after-restart').waitFor({ timeout: 15000 });
    assert.equal(await page.locator('#privacy').getAttribute('data-details'), 'truncated');
    assert.equal(await row('after-restart').locator('td[data-field=user-agent]').textContent(), 'after-restart');
    assert.deepEqual(pageErrors, [], 'no script errors and no CSP violations');
  });
});

describe('/stats cluster view of two relays joined by nats-server', () => {
  let natsPort;
  let nats;
  const relays = [];
  const ports = [];
  let browser;
  let page;
  const sockets = [];
  const pageErrors = [];

  before(async () => {
    assert.ok(fs.existsSync(JAR), `${JAR} is missing: run mvn -B -ntp verify first`);
    natsPort = await freePort();
    nats = spawn(NATS, ['-a', '127.0.0.1', '-p', String(natsPort)], { stdio: 'ignore' });
    for (const name of ['e2e-a', 'e2e-b']) {
      const port = await freePort();
      ports.push(port);
      relays.push(await startRelay(port, ['--nats', `nats://127.0.0.1:${natsPort}`, '--node-name', name]));
    }
    sockets.push(await client(ports[0], '/in/lab-cam', 'cam-a'));
    sockets.push(await client(ports[0], '/out/lab-cam', 'viewer-a'));
    sockets.push(await client(ports[1], '/out/lab-cam', 'viewer-b1'));
    sockets.push(await client(ports[1], '/out/lab-cam', 'viewer-b2'));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
    await page.goto(`http://127.0.0.1:${ports[0]}/stats`);
  });

  after(async () => {
    sockets.splice(0).forEach((s) => s.terminate());
    if (browser) await browser.close();
    for (const r of relays) await stopRelay(r);
    if (nats) nats.kill('SIGKILL');
  });

  const section = () => page.locator('section[data-topic="/out/lab-cam"]');

  it('opens on the cluster view: every node, totals and a row per node', async () => {
    await page.waitForFunction(() => document.querySelectorAll('#nodes .node.up').length === 2, null, { timeout: 20000 });
    assert.equal(await page.locator('#scope button[data-scope=cluster]').getAttribute('aria-pressed'), 'true');
    assert.match(await section().locator('h2').textContent(), /1 publisher · 3 subscribers/);
    assert.match(await section().locator('tr[data-node=e2e-a] td[data-field=members]').textContent(), /1 publisher · 1 subscriber/);
    assert.match(await section().locator('tr[data-node=e2e-b] td[data-field=members]').textContent(), /2 subscribers/);
  });

  it('shows one topic\'s connections from every node on request', async () => {
    await section().locator('button.expand').click();
    await section().locator('tr[data-client-id][data-node=e2e-b]').first().waitFor({ timeout: 15000 });
    assert.equal(await section().locator('tr[data-client-id][data-node=e2e-a]').count(), 2);
    assert.equal(await section().locator('tr[data-client-id][data-node=e2e-b]').count(), 2);
    assert.equal(await section().locator('tr[data-client-id] td[data-field=address]').first().textContent(), '127.0.0.0/24');
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, 'stats-cluster.png'), fullPage: true });
  });

  it('shows a stopped node as missing, not left out', async () => {
    await stopRelay(relays[1]);
    await page.waitForFunction(() => {
      const n = document.querySelector('#nodes .node[data-node=e2e-b]');
      return n && n.getAttribute('data-state') === 'missing';
    }, null, { timeout: 15000 });
    assert.match(await page.locator('#nodes .node[data-node=e2e-b]').textContent(), /e2e-b · missing since/);
  });

  it('switches to this node only', async () => {
    await page.locator('#scope button[data-scope=local]').click();
    // The cluster view already shows viewer-a: wait for the local view itself, which lists no nodes.
    await page.waitForFunction(() => document.querySelectorAll('#nodes .node').length === 0, null, { timeout: 15000 });
    await page.locator('tr[data-client-id]', { hasText: 'viewer-a' }).waitFor({ timeout: 15000 });
    assert.equal(await section().locator('tr[data-client-id]').count(), 2, 'this node\'s clients only');
    assert.match(page.url(), /scope=local/);
    assert.deepEqual(pageErrors, [], 'no script errors and no CSP violations');
  });
});

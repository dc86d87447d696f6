// The /stats page in a real headless Chromium, against the real relay (the fat jar) with real
// WebSocket clients: rows for a live publisher and its subscribers, numbers that move, client
// strings that stay text, a layout that fits a phone, and reconnection after a relay restart.
//
// Run after `mvn -B -ntp verify` (which builds crossbar-server/target/crossbar.jar):
//   cd src/e2e && npm ci && node --test
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
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

/** Starts the relay jar on 127.0.0.1:port and waits until /healthz answers. */
async function startRelay(port) {
  const proc = spawn('java', ['-Xmx256m', '-XX:+UseSerialGC', '-jar', JAR, '--listen', `127.0.0.1:${port}`],
    { stdio: ['ignore', 'pipe', 'pipe'] });
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

function client(port, p, agent) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${p}`, { headers: { 'User-Agent': agent } });
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
    sockets.push(pub, ...subs, evilA, evilB);
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
    relay = await startRelay(port);
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
    assert.equal(await row('lab-camera').locator('td[data-field=user-agent]').textContent(), PUB_AGENT);
    assert.equal(await row('onerror=window').locator('td[data-field=user-agent]').textContent(), EVIL_AGENT);
    assert.equal(await page.locator('img').count(), 0, 'no <img> element may be created from client data');
    assert.equal(await page.locator('script').count(), 1, 'only the page\'s own script');
    assert.equal(await page.evaluate(() => window.__xss), undefined, 'no injected script ran');
    assert.deepEqual(dialogs, []);
    assert.deepEqual(pageErrors, [], 'no script errors and no CSP violations');
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
    relay = await startRelay(port);
    const after = await client(port, '/lab/after-restart', 'after-restart');
    sockets.push(after);
    // Back-off is at most 10 s between attempts; the first snapshot comes on connect.
    await row('after-restart').waitFor({ timeout: 20000 });
    assert.equal(await page.locator('#status').textContent(), 'live');
    assert.equal(await row('lab-camera').count(), 0, 'the old relay\'s clients are gone');
  });
});

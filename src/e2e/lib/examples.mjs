// Pieces shared by the examples' tests (examples-*.test.mjs): a relay that can be killed and started
// again on the same port, the Python examples as child processes, the browser examples as pages.
// Each test runs an example from examples/ unchanged, as a lab developer would.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, sleep, startRelay, stopRelay, timeout } from './live-video.mjs';

export const EXAMPLES = path.join(ROOT, 'examples');
/** The Python that has examples/python/requirements.txt installed: the venv ./test.sh makes. */
export const PYTHON = process.env.EXAMPLES_PYTHON || path.join(ROOT, 'target', 'examples-venv', 'bin', 'python');
const BROWSER_MODULES = path.join(EXAMPLES, 'browser', 'node_modules');

/**
 * Access control for a relay: an HS256 secret and audience as an operator passes them, and no clock
 * skew, so that a token's expiry closes its connection at `exp`.
 */
const SECRET = 'examples-e2e-secret-0123456789abcdef';
const AUDIENCE = 'wss://relay.examples.e2e';
export const AUTH_ARGS = ['--auth-secret', SECRET, '--auth-audience', AUDIENCE, '--auth-clock-skew', '0s'];

/** A token for AUTH_ARGS' relay: `topic` and `scope` as claims, valid for `seconds`. */
export function token(topic, scope, seconds = 3600) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const head = b64({ alg: 'HS256', typ: 'JWT' });
  const body = b64({ aud: AUDIENCE, iat: now, exp: now + seconds, topic, scope });
  return `${head}.${body}.${crypto.createHmac('sha256', SECRET).update(`${head}.${body}`).digest('base64url')}`;
}

/** Fails at once, saying what to run, when the examples' dependencies are not installed. */
export function checkInstalled() {
  const missing = [];
  if (!fs.existsSync(PYTHON)) {
    missing.push(`${PYTHON} (python3 -m venv target/examples-venv && target/examples-venv/bin/pip install -r examples/python/requirements.txt, or set EXAMPLES_PYTHON)`);
  }
  if (!fs.existsSync(BROWSER_MODULES)) missing.push(`${BROWSER_MODULES} (cd examples/browser && npm ci)`);
  if (missing.length) throw new Error(`the examples' dependencies are missing (./test.sh installs them): ${missing.join('; ')}`);
}

/**
 * Polls fn (sync or async) until it returns something truthy, and returns that; fails after
 * timeoutMs, saying `what` (a string, or a function called then, for the state at that moment).
 */
export async function waitFor(fn, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${typeof what === 'function' ? await what() : what}`);
    await sleep(50);
  }
}

/**
 * The relay on a fixed port, which a test stops (SIGTERM: the relay drains, close 1012 "relay restarting: ..." to
 * every client) or kills (SIGKILL: the connections just end) and starts again on the same port.
 */
export class Relay {
  constructor(port, args) {
    this.port = port;
    this.args = [...args];
    this.url = `ws://127.0.0.1:${port}`;
  }

  async start() {
    this.relay = await startRelay(this.port, this.args);
    return this;
  }

  async stop(signal = 'SIGTERM') {
    if (signal === 'SIGKILL' && this.relay && this.relay.proc.exitCode === null) {
      this.relay.proc.kill('SIGKILL');
      await this.relay.exited;
    } else {
      await stopRelay(this.relay);
    }
  }
}

/**
 * Runs examples/python/<script> with args; stdout is kept as lines, stderr (its log) as text.
 * The environment is the test's own, less a token, plus `env`; `stdin` is a stream to read from
 * (another process's output), else none.
 */
export function runPython(script, args, { env = {}, stdin = 'ignore' } = {}) {
  const proc = spawn(PYTHON, ['-u', script, ...args], {
    cwd: path.join(EXAMPLES, 'python'),
    env: { ...process.env, CROSSBAR_TOKEN: '', ...env },
    stdio: [stdin, 'pipe', 'pipe'],
  });
  const example = { proc, lines: [], log: '' };
  let partial = '';
  proc.stdout.on('data', (d) => {
    const parts = (partial + d).split('\n');
    partial = parts.pop();
    example.lines.push(...parts);
  });
  proc.stderr.on('data', (d) => { example.log += d; });
  example.exited = new Promise((resolve) => proc.on('exit', resolve));
  example.stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGTERM');
    if ((await Promise.race([example.exited, timeout(5000)])) === 'timeout') proc.kill('SIGKILL');
  };
  return example;
}

/**
 * Opens examples/browser/<file> from disk (as a developer may: classic scripts, no server needed)
 * with the given query; collects page errors.
 */
export async function examplePage(browser, file, query) {
  const page = await browser.newPage({ viewport: { width: 900, height: 700 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const url = pathToFileURL(path.join(EXAMPLES, 'browser', file));
  url.search = new URLSearchParams(query).toString();
  await page.goto(url.href);
  return { page, errors };
}

/** The text and state of the page's #status element. */
export async function status(page) {
  return page.locator('#status').evaluate((e) => ({ state: e.dataset.state, text: e.textContent }));
}

// examples/browser/data.html, the JSON data client, in headless Chromium, on a relay with access
// control: two pages on one N:N topic send each other messages through the page's form; the relay
// is stopped (SIGTERM: it drains, close 1012 "relay restarting: ...") and started again on the same port; both
// pages must come back by themselves and messages flow again, within a bound. A page whose token
// expires (close 1008) stops and says so rather than retrying it.
//
// Run after `./mvnw -B -ntp -q package -DskipTests` and `cd examples/browser && npm ci`:
//   cd src/e2e && node --test examples-data.test.mjs
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, freePort } from './lib/live-video.mjs';
import { AUTH_ARGS, Relay, checkInstalled, examplePage, status, token, waitFor } from './lib/examples.mjs';

/** The relay takes about 1-3 s to start; the pages' back-off is at most 0.5 + 1 + 2 + 4 + 8 s by then. */
const BACK_WITHIN_MS = 25000;

describe('the browser data client', () => {
  let relay;
  let browser;

  before(async () => {
    checkInstalled();
    relay = await new Relay(await freePort(), AUTH_ARGS).start();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  });

  after(async () => {
    await browser?.close();
    await relay?.stop();
  });

  /** Sends `message` from page `from` through its form, again every 0.5 s, until page `to` shows it. */
  async function deliver(from, to, message, timeoutMs) {
    await from.locator('#message').fill(JSON.stringify(message));
    const expected = `← ${JSON.stringify(message)}`;
    await waitFor(async () => {
      if (await from.locator('#send button').isEnabled()) await from.locator('#send button').click();
      return (await to.locator('#log li.received').allTextContents()).some((t) => t.endsWith(expected));
    }, timeoutMs, async () => `${JSON.stringify(message)} reaches the other page; its status: ${JSON.stringify(await status(to))}`);
  }

  it('two pages talk, and talk again after the relay restarts', async () => {
    const query = { relay: relay.url, stream: 'lab/pendulum', token: token('/lab/pendulum', 'read write') };
    const a = await examplePage(browser, 'data.html', query);
    const b = await examplePage(browser, 'data.html', query);
    for (const { page } of [a, b]) await waitFor(async () => (await status(page)).state === 'open', 10000, 'the page connects');

    await deliver(a.page, b.page, { setpoint: 1, from: 'a' }, 5000);
    await deliver(b.page, a.page, { setpoint: 2, from: 'b' }, 5000);
    // Not JSON: refused by the page, not sent.
    await a.page.locator('#message').fill('{not json');
    await a.page.locator('#send button').click();
    assert.match(await a.page.locator('#error').textContent(), /^not sent: /);

    await relay.stop('SIGTERM');
    for (const { page } of [a, b]) {
      await waitFor(async () => (await status(page)).state !== 'open', 5000, 'the page sees the relay go');
      assert.equal(await page.locator('#send button').isDisabled(), true, 'nothing can be sent while away');
    }
    const waiting = await status(a.page);
    assert.match(waiting.text, /closed (1012 \(relay restarting: |1001 \(relay shutting down\)|1006)/, JSON.stringify(waiting));
    const stoppedAt = Date.now();
    await relay.start();

    await deliver(a.page, b.page, { setpoint: 3, from: 'a', after: 'restart' }, BACK_WITHIN_MS);
    await deliver(b.page, a.page, { setpoint: 4, from: 'b', after: 'restart' }, 5000);
    console.log(`# back ${Date.now() - stoppedAt} ms after the stop (relay start included)`);
    assert.deepEqual([...a.errors, ...b.errors], []);
  });

  it('stops, saying why, when its token expires (close 1008) rather than retrying it', async () => {
    const { page, errors } = await examplePage(browser, 'data.html',
      { relay: relay.url, stream: 'lab/pendulum', token: token('/lab/pendulum', 'read write', 2) });
    await waitFor(async () => (await status(page)).state === 'open', 10000, 'the page connects');
    await waitFor(async () => (await status(page)).state === 'ended', 10000, async () => `ended: ${JSON.stringify(await status(page))}`);
    assert.equal((await status(page)).text, 'closed 1008 (token expired): reload the page with a new token');
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal((await status(page)).state, 'ended', 'no reconnection');
    assert.deepEqual(errors, []);
  });
});

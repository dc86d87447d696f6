// examples/browser/terminal.html (xterm.js) and examples/python/host_agent.py on a schema=session
// stream, in headless Chromium: two pages each get a shell of their own in a pty (their `$$` and
// `tty` differ), a command typed into the terminal prints its output there; the relay is stopped
// (SIGTERM: it drains, 1012 to everyone, which ends the sessions) and started again on the same port; the agent
// and both pages must come back by themselves, each page with a new shell that runs what is typed,
// within a bound. A shell that exits ends its session (1000); a key then starts a new one.
//
// Run after `./mvnw -B -ntp -q package -DskipTests`, `cd examples/browser && npm ci` and the examples'
// venv (src/e2e/README.md):   cd src/e2e && node --test examples-terminal.test.mjs
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, SHOTS, freePort } from './lib/live-video.mjs';
import { Relay, checkInstalled, examplePage, runPython, status, waitFor } from './lib/examples.mjs';

/**
 * The relay takes about 1-3 s to start, the agent is back within a few seconds more, and until then
 * each page meets 1013 "no host" as well as refusals, so its back-off may reach 16 s.
 */
const BACK_WITHIN_MS = 45000;
/** A shell's prompt ends a line with $ (or # for root), whatever else /etc/bash.bashrc puts in it. */
const PROMPT = /[$#][\s\u00a0]*$/m;

describe('the browser terminal and the Python host agent', () => {
  let relay;
  let agent;
  let browser;
  let home;

  before(async () => {
    checkInstalled();
    relay = await new Relay(await freePort(), ['--route', '/shell/**:schema=session']).start();
    // bash without the rc files of this machine's user.
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'crossbar-agent-'));
    agent = runPython('host_agent.py', [relay.url, 'shell/lab1'], { env: { SHELL: '/bin/bash', HOME: home } });
    await waitFor(() => agent.log.includes('connected to'), 10000, () => `the agent connects: ${agent.log}`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  });

  after(async () => {
    await browser?.close();
    await agent?.stop();
    await relay?.stop();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  const screen = (page) => page.locator('.xterm-rows').innerText();

  /**
   * Waits until the page's terminal shows a shell's prompt: its session is open and its shell runs.
   * `stale`: text of an earlier session, which a reconnected terminal no longer shows.
   */
  async function prompt(page, timeoutMs, stale = /^$/) {
    await waitFor(async () => {
      if ((await status(page)).state !== 'open') return false;
      const text = await screen(page);
      return PROMPT.test(text) && !stale.test(text);
    },
      timeoutMs, async () => `a prompt; status ${JSON.stringify(await status(page))}, screen:\n${await screen(page)}\nagent:\n${agent.log}`);
  }

  /** Types a command that prints its shell's pid and tty; returns them as the terminal shows them. */
  async function whoAmI(page, tag) {
    await page.locator('#terminal').click();
    // The typed line shows `$((6*7))`; only the output has the 42.
    await page.keyboard.type(`echo ${tag}-$((6*7))-$$-$(tty)`);
    await page.keyboard.press('Enter');
    const line = await waitFor(async () => (await screen(page)).match(new RegExp(`${tag}-42-(\\d+)-(/dev/pts/\\d+)`)),
      10000, async () => `the output of ${tag}'s command; screen:\n${await screen(page)}`);
    return { pid: line[1], tty: line[2] };
  }

  it('two pages get two shells, and new ones after the relay restarts', async () => {
    const query = { relay: relay.url, stream: 'shell/lab1' };
    const a = await examplePage(browser, 'terminal.html', query);
    const b = await examplePage(browser, 'terminal.html', query);
    await prompt(a.page, 10000);
    await prompt(b.page, 10000);

    const shellA = await whoAmI(a.page, 'a');
    const shellB = await whoAmI(b.page, 'b');
    assert.notEqual(shellA.pid, shellB.pid, 'two shells');
    assert.notEqual(shellA.tty, shellB.tty, 'two terminals');
    // Each page's terminal shows its own shell only.
    assert.doesNotMatch(await screen(a.page), /b-42-/);
    assert.doesNotMatch(await screen(b.page), /a-42-/);
    // The page told the agent its size, which the shell's terminal now has.
    await a.page.keyboard.type('stty size');
    await a.page.keyboard.press('Enter');
    await waitFor(async () => (await screen(a.page)).includes('30 100'), 5000, async () => `stty size: ${await screen(a.page)}`);

    await relay.stop('SIGTERM');
    for (const { page } of [a, b]) await waitFor(async () => (await status(page)).state === 'waiting', 5000, 'the page sees the relay go');
    const stoppedAt = Date.now();
    await relay.start();

    await prompt(a.page, BACK_WITHIN_MS, /a-42-/);
    await prompt(b.page, BACK_WITHIN_MS, /b-42-/);
    const againA = await whoAmI(a.page, 'again-a');
    const againB = await whoAmI(b.page, 'again-b');
    console.log(`# back ${Date.now() - stoppedAt} ms after the stop (relay start included)`);
    assert.notEqual(againA.pid, againB.pid);
    for (const old of [shellA.pid, shellB.pid]) assert.ok(![againA.pid, againB.pid].includes(old), 'new shells');
    assert.equal(agent.proc.exitCode, null, `the agent still runs:\n${agent.log}`);
    fs.mkdirSync(SHOTS, { recursive: true });
    await a.page.screenshot({ path: path.join(SHOTS, 'example-terminal.png') });

    // `exit` ends the shell and its session (1000), without a reconnection; a key starts a new one.
    await a.page.keyboard.type('exit');
    await a.page.keyboard.press('Enter');
    await waitFor(async () => (await status(a.page)).state === 'ended', 5000,
      async () => `ended: ${JSON.stringify(await status(a.page))}, screen:\n${await screen(a.page)}\nagent:\n${agent.log}`);
    assert.match((await status(a.page)).text, /^closed 1000.*press a key/);
    await a.page.keyboard.press('x');
    await prompt(a.page, 10000, /again-a-42-/);
    const fresh = await whoAmI(a.page, 'fresh');
    assert.notEqual(fresh.pid, againA.pid);
    assert.deepEqual([...a.errors, ...b.errors], []);
  });
});

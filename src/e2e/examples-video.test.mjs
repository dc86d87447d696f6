// examples/browser/video.html, the JSMpeg viewer, in headless Chromium, and examples/python/camera.py:
// a live ffmpeg camera (its test pattern as MPEG-1 in MPEG-TS, as jsmpeg cameras send it) piped into
// camera.py publishes to /in/cam/1 on a start=keyframe stream, the page plays /out/cam/1; the relay
// is killed (SIGKILL) and started again on the same port; camera.py and the page must come back by
// themselves, and the page draw the live picture again, within a bound.
//
// Run after `./mvnw -B -ntp -q package -DskipTests` and `cd examples/browser && npm ci`, with ffmpeg:
//   cd src/e2e && node --test examples-video.test.mjs
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { CHROMIUM, CHROMIUM_ARGS, FFMPEG, SHOTS, cameraArgs, freePort } from './lib/live-video.mjs';
import { Relay, checkInstalled, examplePage, runPython, status, waitFor } from './lib/examples.mjs';

/** The relay takes about 1-3 s to start; the page's back-off is at most 0.5 + 1 + 2 + 4 + 8 s by then. */
const BACK_WITHIN_MS = 25000;

describe('the browser video viewer', () => {
  let relay;
  let ffmpeg;
  let camera;
  let browser;

  before(async () => {
    checkInstalled();
    relay = await new Relay(await freePort(), ['--route', '/cam/**:start=keyframe']).start();
    // A keyframe a second: after a reconnection the picture comes back at the next one.
    ffmpeg = spawn(FFMPEG, cameraArgs({ gop: 30, fps: 30 }), { stdio: ['ignore', 'pipe', 'inherit'] });
    camera = runPython('camera.py', [`${relay.url}/in/cam/1`], { stdin: ffmpeg.stdout });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  });

  after(async () => {
    ffmpeg?.kill('SIGKILL');
    await camera?.stop();
    await browser?.close();
    await relay?.stop('SIGKILL');
  });

  /**
   * Distinct colours in a screenshot of the canvas: a decoded test pattern has many, a blank canvas
   * one. Read from a screenshot, so it works whether JSMpeg draws with WebGL or a 2D context.
   */
  async function colours(page) {
    const png = await page.locator('#video').screenshot();
    const probe = await browser.newPage();
    try {
      return await probe.evaluate(async (src) => {
        const img = new Image();
        img.src = src;
        await img.decode();
        const c = document.createElement('canvas');
        c.width = img.width;
        c.height = img.height;
        const g = c.getContext('2d');
        g.drawImage(img, 0, 0);
        const d = g.getImageData(0, 0, c.width, c.height).data;
        const seen = new Set();
        for (let i = 0; i < d.length; i += 4 * 97) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
        return seen.size;
      }, `data:image/png;base64,${png.toString('base64')}`);
    } finally {
      await probe.close();
    }
  }

  const frames = async (page) => Number(await page.locator('#frames').textContent());

  it('plays, and plays again after the relay is killed and started again', async () => {
    const { page, errors } = await examplePage(browser, 'video.html', { relay: relay.url, stream: 'cam/1' });
    const report = async () => `status ${JSON.stringify(await status(page))}, ${await frames(page)} frames; camera.py:\n${camera.log}`;

    await waitFor(async () => (await frames(page)) > 30, 15000, async () => `the page decodes a second of video: ${await report()}`);
    assert.ok((await colours(page)) > 8, 'the canvas shows the test pattern');
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.locator('#video').screenshot({ path: path.join(SHOTS, 'example-video-before.png') });

    await relay.stop('SIGKILL');
    await waitFor(async () => (await status(page)).state !== 'open', 5000, 'the page sees the relay go');
    const killedAt = Date.now();
    const framesWhileAway = await frames(page);
    await relay.start();

    // Frames decoded after the restart can only have come through the new relay.
    await waitFor(async () => (await frames(page)) > framesWhileAway + 30, BACK_WITHIN_MS,
      async () => `the page decodes video again: ${await report()}`);
    console.log(`# back ${Date.now() - killedAt} ms after the kill (relay start included)`);
    assert.equal((await status(page)).state, 'open');
    assert.ok((await colours(page)) > 8, 'the canvas shows the test pattern again');
    await page.locator('#video').screenshot({ path: path.join(SHOTS, 'example-video-after.png') });
    assert.equal(camera.log.match(/connected to/g)?.length, 2, `camera.py came back by itself:\n${camera.log}`);
    assert.deepEqual(errors, []);
  });
});

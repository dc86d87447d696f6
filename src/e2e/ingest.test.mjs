// HTTP ingest as a lab's camera uses it: Debian's ffmpeg posts its test pattern, encoded in real time
// as jsmpeg's MPEG-1 in MPEG-TS, straight to the relay (`-f mpegts http://relay/in/cam/post`, the
// command in the README, no WebSocket helper in between), and the JSMpeg player in headless Chromium
// draws it from /out/cam/post. The stream has start=keyframe, so the viewer, joining mid-stream,
// shows a picture at once. Screenshot: target/jsmpeg-http-ingest.png.
//
// Run after `mvn -B -ntp verify` (builds crossbar-server/target/crossbar.jar), with ffmpeg and
// chromium installed:   cd src/e2e && npm ci && node --test ingest.test.mjs
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import {
  CHROMIUM, CHROMIUM_ARGS, FFMPEG, SHOTS, firstFrames, freePort, join, sleep, startRelay, stopRelay, viewerPage,
} from './lib/live-video.mjs';

/** A frame within this long of the player's start: the relay sends the current GOP first. */
const FIRST_FRAME_MS = 5000;

describe('JSMpeg drawing a camera that ffmpeg posts over HTTP', () => {
  let port;
  let relay;
  let camera;
  let cameraLog = '';
  let browser;

  before(async () => {
    port = await freePort();
    relay = await startRelay(port, ['--route', '/cam/**:start=keyframe']);
    // The README's camera command, with the test pattern for a camera.
    camera = spawn(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-re', '-f', 'lavfi',
      '-i', 'testsrc=size=320x240:rate=25', '-c:v', 'mpeg1video', '-b:v', '800k', '-bf', '0',
      '-f', 'mpegts', `http://127.0.0.1:${port}/in/cam/post`], { stdio: ['ignore', 'ignore', 'pipe'] });
    camera.stderr.on('data', (d) => { cameraLog += d; });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  });

  after(async () => {
    if (camera && camera.exitCode === null) camera.kill('SIGKILL');
    if (browser) await browser.close();
    await stopRelay(relay);
  });

  it('the page shows the picture, and the poster is the stream\'s publisher in /stats', async () => {
    // Let the camera run a moment, so the viewer joins a stream already under way.
    const deadline = Date.now() + 15000;
    let poster;
    while (!poster) {
      assert.ok(Date.now() < deadline, `ffmpeg never showed up as a publisher: ${cameraLog}`);
      assert.equal(camera.exitCode, null, `ffmpeg exited: ${cameraLog}`);
      poster = await findPoster();
      if (!poster) await sleep(200);
    }
    assert.match(poster.userAgent, /^Lavf/, JSON.stringify(poster));
    assert.equal(poster.path, '/in/cam/post');
    await sleep(1500);

    const { page, errors } = await viewerPage(browser);
    const [id] = await join(page, port, ['/out/cam/post']);
    await firstFrames(page, [id], FIRST_FRAME_MS);
    await sleep(1500);
    const state = await page.evaluate((i) => window.__state(i), id);
    assert.ok(state.frames > 20, `frames decoded: ${JSON.stringify(state)}`);
    const colours = await page.evaluate((i) => window.__colours(i), id);
    assert.ok(colours > 8, `${colours} distinct colours: the canvas is blank`);
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.locator(`#${id}`).screenshot({ path: path.join(SHOTS, 'jsmpeg-http-ingest.png') });
    assert.deepEqual(errors, []);
    await page.close();
    assert.equal(camera.exitCode, null, `ffmpeg kept posting: ${cameraLog}`);
  });

  /** The stream's publisher in a /ws snapshot (statistics), or undefined. */
  async function findPoster() {
    const { default: WebSocket } = await import('ws');
    const snap = await new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
      ws.on('message', (d) => { resolve(JSON.parse(d)); ws.close(); });
      ws.on('error', reject);
    });
    return snap.clients.find((c) => c.role === 'publisher' && c.path === '/in/cam/post');
  }
});

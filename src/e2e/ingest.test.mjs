// HTTP ingest as a lab's camera uses it: Debian's ffmpeg posts its test pattern, encoded in real time
// as jsmpeg's MPEG-1 in MPEG-TS, straight to the relay, no WebSocket helper in between. The command
// is the README's own line ("A camera straight from ffmpeg"), read from it, with only the relay's
// port changed. The JSMpeg player in headless Chromium draws it from /out/cam/1. The stream has
// start=keyframe, so the viewer, joining mid-stream, shows a picture at once.
// Screenshot: target/jsmpeg-http-ingest.png.
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
  CHROMIUM, CHROMIUM_ARGS, FFMPEG, ROOT, SHOTS, firstFrames, freePort, join, sleep, startRelay, stopRelay, viewerPage,
} from './lib/live-video.mjs';

/** The README's test-pattern camera: its one line that starts with `ffmpeg -re`, split into arguments. */
function readmeCamera(port) {
  const line = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').find((l) => l.startsWith('ffmpeg -re '));
  assert.ok(line, 'README.md has no line starting with "ffmpeg -re"');
  assert.ok(line.includes('http://127.0.0.1:8080/in/cam/1'), `the README's camera posts elsewhere: ${line}`);
  return line.replace('127.0.0.1:8080', `127.0.0.1:${port}`).split(/\s+/).slice(1);
}

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
    camera = spawn(FFMPEG, ['-hide_banner', '-loglevel', 'error', ...readmeCamera(port)],
      { stdio: ['ignore', 'ignore', 'pipe'] });
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
    assert.equal(poster.path, '/in/cam/1');
    await sleep(1500);

    const { page, errors } = await viewerPage(browser);
    const [id] = await join(page, port, ['/out/cam/1']);
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
    return snap.clients.find((c) => c.role === 'publisher' && c.path === '/in/cam/1');
  }
});

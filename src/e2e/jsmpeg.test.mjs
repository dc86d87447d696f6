// start=keyframe with the real JSMpeg player in headless Chromium: a live ffmpeg camera (MPEG-1 in
// MPEG-TS, 30 fps, a keyframe every 2 s) publishes in real time to /in/cam/1, which the relay's
// routing table gives start=keyframe, and the same chunks to /in/plain/1, which no rule matches.
// Mid-GOP, 0.7 s after a keyframe, a page opens a JSMpeg player on each. The time from the
// WebSocket's open to the first decoded frame must be short on the keyframe stream (the relay sends
// the current GOP first) and, on the plain one, no shorter than the wait for the next keyframe.
//
// Run after `mvn -B -ntp verify` (builds crossbar-server/target/crossbar.jar), with ffmpeg and
// chromium installed:   cd src/e2e && npm ci && node --test jsmpeg.test.mjs
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import {
  CHROMIUM, CHROMIUM_ARGS, SHOTS, LiveCamera, firstFrames, freePort, join, publisher, sleep, startRelay,
  stopRelay, viewerPage,
} from './lib/live-video.mjs';

const FPS = 30;
const GOP = 60; // frames: a keyframe every 2 s
const JOIN_AFTER_KEYFRAME_MS = 700;
/** start=keyframe: the GOP is sent on join, so the first frame follows at once. */
const KEYFRAME_FIRST_FRAME_MS = 200;
/** Without it the decoder waits for the next keyframe; allowance for when the page saw it. */
const PLAIN_MARGIN_MS = 300;

describe('JSMpeg joining a live MPEG-TS camera mid-GOP', () => {
  let port;
  let relay;
  let camera;
  let browser;

  before(async () => {
    port = await freePort();
    relay = await startRelay(port, ['--route', '/cam/**:start=keyframe']);
    camera = new LiveCamera({ gop: GOP, fps: FPS });
    camera.sockets.push(await publisher(port, '/in/cam/1'), await publisher(port, '/in/plain/1'));
    camera.start();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  });

  after(async () => {
    if (camera) camera.stop();
    if (browser) await browser.close();
    await stopRelay(relay);
  });

  it('start=keyframe shows a frame at once; the plain stream waits for the next keyframe', async () => {
    const { page, errors } = await viewerPage(browser);
    // Let the stream run two GOPs, then join 0.7 s after a keyframe.
    const key = await camera.waitKeyframes(3, 15000);
    await sleep(Math.max(0, key + JOIN_AFTER_KEYFRAME_MS - Date.now()));
    const [camId, plainId] = await join(page, port, ['/out/cam/1', '/out/plain/1']);
    const [cam, plain] = await firstFrames(page, [camId, plainId], 4 * 1000 * GOP / FPS);

    assert.ok(cam.openAt && plain.openAt, `both sockets opened: ${JSON.stringify({ cam, plain })}`);
    const nextKeyframe = await camera.keyframeAfter(plain.openAt, 5000);
    const untilNextKeyframe = nextKeyframe - plain.openAt;
    const camFirst = cam.firstFrameAt - cam.openAt;
    const plainFirst = plain.firstFrameAt - plain.openAt;
    const report = `start=keyframe ${camFirst} ms, plain ${plainFirst} ms, next keyframe ${untilNextKeyframe} ms after open`;
    console.log(`# time to first frame: ${report}`);

    // The join really was mid-GOP: otherwise the comparison below proves nothing.
    assert.ok(untilNextKeyframe > 2 * PLAIN_MARGIN_MS, `joined too close to a keyframe: ${report}`);
    assert.ok(camFirst < KEYFRAME_FIRST_FRAME_MS, `start=keyframe: ${report}`);
    assert.ok(plainFirst >= untilNextKeyframe - PLAIN_MARGIN_MS, `plain stream decoded before a keyframe: ${report}`);

    // Both keep playing the live stream, and their canvases show the test pattern.
    await sleep(1500);
    const after = await Promise.all([camId, plainId].map((id) => page.evaluate((i) => window.__state(i), id)));
    assert.ok(after.every((s) => s.frames > 20), `frames decoded: ${JSON.stringify(after)}`);
    for (const id of [camId, plainId]) {
      const colours = await page.evaluate((i) => window.__colours(i), id);
      assert.ok(colours > 8, `${id}: ${colours} distinct colours, not a picture`);
    }
    fs.mkdirSync(SHOTS, { recursive: true });
    await page.locator(`#${camId}`).screenshot({ path: path.join(SHOTS, 'jsmpeg-keyframe.png') });
    await page.locator(`#${plainId}`).screenshot({ path: path.join(SHOTS, 'jsmpeg-plain.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });
});

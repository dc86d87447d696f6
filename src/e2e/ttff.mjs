// Measures time to first frame for a late joiner (issue 15, "Measure and report"): for each GOP
// length, a live ffmpeg camera (MPEG-1 in MPEG-TS, 30 fps) publishes in real time to /in/cam/1
// (start=keyframe by the relay's routing table) and /in/plain/1 (no rule); JOINS times, at a random
// point of the GOP, a fresh Chromium page opens a JSMpeg player on each and records the time from
// the WebSocket's open to the first decoded frame. Prints one line per GOP and stream with the
// minimum, median, 90th percentile and maximum in ms, and writes them to target/ttff.json.
//
//   cd src/e2e && npm ci && node ttff.mjs                 # GOPS=30,120 JOINS=20 by default
//   GOPS=30,60,120 JOINS=50 SEED=1 node ttff.mjs
//
// Needs crossbar-server/target/crossbar.jar (mvn -B -ntp verify), ffmpeg and chromium. Takes about
// JOINS x (GOP / 30 + 1.5) seconds per GOP length.
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import {
  CHROMIUM, CHROMIUM_ARGS, SHOTS, LiveCamera, firstFrames, freePort, join, publisher, sleep, startRelay,
  stopRelay, viewerPage,
} from './lib/live-video.mjs';

const FPS = 30;
const GOPS = (process.env.GOPS || '30,120').split(',').map(Number);
const JOINS = Number(process.env.JOINS || 20);
let seed = Number(process.env.SEED || 15);
// A small seeded generator so that two runs join at the same points of the GOP.
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};

function summary(values) {
  const s = [...values].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { n: s.length, min: s[0], median: q(0.5), p90: q(0.9), max: s[s.length - 1] };
}

async function measure(browser, gop) {
  const port = await freePort();
  const relay = await startRelay(port, ['--route', '/cam/**:start=keyframe']);
  const camera = new LiveCamera({ gop, fps: FPS });
  const gopMs = (1000 * gop) / FPS;
  const results = { keyframe: [], plain: [] };
  try {
    camera.sockets.push(await publisher(port, '/in/cam/1'), await publisher(port, '/in/plain/1'));
    camera.start();
    await camera.waitKeyframes(2, 3 * gopMs + 10000);
    for (let i = 0; i < JOINS; i++) {
      // Join at a random point of the GOP: after the latest keyframe plus a random share of a GOP.
      const latest = camera.keyframes[camera.keyframes.length - 1];
      await sleep(Math.max(0, latest + random() * gopMs - Date.now()));
      const { page, errors } = await viewerPage(browser);
      const ids = await join(page, port, ['/out/cam/1', '/out/plain/1']);
      const [cam, plain] = await firstFrames(page, ids, 2 * gopMs + 5000);
      results.keyframe.push(cam.firstFrameAt - cam.openAt);
      results.plain.push(plain.firstFrameAt - plain.openAt);
      if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
      await page.close();
      process.stderr.write('.');
    }
    process.stderr.write('\n');
  } finally {
    camera.stop();
    await stopRelay(relay);
  }
  return { gop, fps: FPS, gopMs, keyframe: summary(results.keyframe), plain: summary(results.plain), raw: results };
}

const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
const all = [];
try {
  for (const gop of GOPS) {
    const r = await measure(browser, gop);
    all.push(r);
    for (const kind of ['keyframe', 'plain']) {
      const s = r[kind];
      console.log(`-g ${gop} (${r.gopMs.toFixed(0)} ms GOP) ${kind === 'keyframe' ? 'start=keyframe' : 'start=live    '}`
        + `  n=${s.n}  min ${s.min}  median ${s.median}  p90 ${s.p90}  max ${s.max} ms`);
    }
  }
} finally {
  await browser.close();
}
fs.mkdirSync(SHOTS, { recursive: true });
fs.writeFileSync(path.join(SHOTS, 'ttff.json'), JSON.stringify(all, null, 2));

// Pieces shared by jsmpeg.test.mjs and ttff.mjs: the relay jar, a live ffmpeg camera publishing
// MPEG-TS in real time as a camera does, and a Chromium page that opens JSMpeg players and records,
// for each, when its WebSocket opened and when it decoded its first frame.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

export const E2E = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT = path.resolve(E2E, '..', '..');
export const JAR = path.join(ROOT, 'crossbar-server', 'target', 'crossbar.jar');
export const SHOTS = path.join(ROOT, 'target');
export const JSMPEG = path.join(E2E, 'node_modules', '@cycjimmy', 'jsmpeg-player', 'dist', 'jsmpeg-player.umd.min.js');
// Debian's chromium and ffmpeg; CHROMIUM / FFMPEG override them.
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const FFMPEG = process.env.FFMPEG || 'ffmpeg';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-background-timer-throttling', '--disable-renderer-backgrounding'];

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Starts the relay jar on 127.0.0.1:port with extra flags and waits until /healthz answers. */
export async function startRelay(port, args = []) {
  if (!fs.existsSync(JAR)) throw new Error(`${JAR} is missing: run mvn -B -ntp verify first`);
  const proc = spawn('java', ['-Xmx256m', '-XX:+UseSerialGC', '-jar', JAR, '--listen', `127.0.0.1:${port}`, ...args],
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

/** Resolves to 'timeout' after ms, without keeping the process alive for it (a test's end is not delayed). */
export const timeout = (ms) => new Promise((resolve) => setTimeout(resolve, ms, 'timeout').unref());

export async function stopRelay(relay) {
  if (!relay || relay.proc.exitCode !== null) return;
  relay.proc.kill('SIGTERM');
  if ((await Promise.race([relay.exited, timeout(10000)])) === 'timeout') relay.proc.kill('SIGKILL');
}

export function publisher(port, p) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${p}`, { headers: { 'User-Agent': 'ffmpeg-camera' } });
    ws.on('open', () => resolve(ws));
    ws.on('error', reject);
  });
}

/**
 * Finds keyframe packets in an MPEG-TS byte stream that starts at a packet boundary (ffmpeg's
 * output does): a packet that starts a video PES (stream_id 0xE0-0xEF) with random_access_indicator
 * set. Written here independently of the relay's Java tracker.
 */
export class KeyframeScanner {
  constructor() {
    this.rest = Buffer.alloc(0);
  }

  /** Returns how many keyframe packets this chunk completes. */
  push(chunk) {
    const buf = this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk;
    let n = 0;
    let at = 0;
    for (; at + 188 <= buf.length; at += 188) {
      if (buf[at] !== 0x47) throw new Error('ffmpeg output lost MPEG-TS sync');
      const pusi = (buf[at + 1] & 0x40) !== 0;
      const adaptation = (buf[at + 3] & 0x20) !== 0;
      if (!pusi || !adaptation || buf[at + 4] === 0 || (buf[at + 5] & 0x40) === 0) continue;
      const pes = at + 5 + buf[at + 4];
      if (buf[pes] === 0 && buf[pes + 1] === 0 && buf[pes + 2] === 1 && (buf[pes + 3] & 0xf0) === 0xe0) n++;
    }
    this.rest = Buffer.from(buf.subarray(at));
    return n;
  }
}

/**
 * ffmpeg's arguments for a live camera: its test pattern encoded in real time (-re) as jsmpeg's
 * MPEG-1 in MPEG-TS, a keyframe every `gop` frames, written to its standard output.
 */
export function cameraArgs({ gop = 60, fps = 30, size = '320x240', bitrate = '800k' } = {}) {
  return ['-hide_banner', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', `testsrc=size=${size}:rate=${fps}`,
    '-c:v', 'mpeg1video', '-b:v', bitrate, '-bf', '0', '-g', String(gop),
    '-flush_packets', '1', '-muxdelay', '0', '-f', 'mpegts', 'pipe:1'];
}

/**
 * A live camera: ffmpeg encodes its test pattern in real time (-re) as jsmpeg's MPEG-1 in MPEG-TS,
 * a keyframe every `gop` frames, and each chunk it writes to its pipe is sent as one WebSocket
 * message to every publisher socket, as jsmpeg's websocket-relay forwards ffmpeg's HTTP body.
 * `keyframes` holds the wall-clock time (Date.now()) at which each keyframe's packet was sent.
 */
export class LiveCamera {
  constructor({ gop = 60, fps = 30, size = '320x240', bitrate = '800k' } = {}) {
    this.gop = gop;
    this.fps = fps;
    this.size = size;
    this.bitrate = bitrate;
    this.sockets = [];
    this.keyframes = [];
    this.bytes = 0;
    this.messages = 0;
    this.scanner = new KeyframeScanner();
  }

  start() {
    this.proc = spawn(FFMPEG, cameraArgs(this), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.stderr = '';
    this.proc.stderr.on('data', (d) => { this.stderr += d; });
    this.proc.on('error', (e) => { this.stderr += String(e); });
    this.proc.stdout.on('data', (chunk) => {
      const keyframes = this.scanner.push(chunk);
      for (const ws of this.sockets) {
        if (ws.readyState === WebSocket.OPEN) ws.send(chunk);
      }
      const now = Date.now();
      for (let i = 0; i < keyframes; i++) this.keyframes.push(now);
      this.bytes += chunk.length;
      this.messages++;
    });
    return this;
  }

  /** Waits (bounded) until `count` keyframes have been sent; returns the last one's time. */
  async waitKeyframes(count, timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    while (this.keyframes.length < count) {
      if (this.proc.exitCode !== null) throw new Error(`ffmpeg exited ${this.proc.exitCode}: ${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`only ${this.keyframes.length} of ${count} keyframes in ${timeoutMs} ms: ${this.stderr}`);
      await sleep(10);
    }
    return this.keyframes[count - 1];
  }

  /** The first keyframe sent at or after `t`, waiting (bounded) for it. */
  async keyframeAfter(t, timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const k = this.keyframes.find((x) => x >= t);
      if (k !== undefined) return k;
      if (Date.now() > deadline) throw new Error(`no keyframe within ${timeoutMs} ms after ${t}`);
      await sleep(10);
    }
  }

  stop() {
    if (this.proc && this.proc.exitCode === null) this.proc.kill('SIGKILL');
    this.sockets.forEach((s) => s.terminate());
  }
}

/**
 * A blank page with JSMpeg loaded. window.__join(url, id) starts a player on a new canvas; each
 * viewer records openAt (its WebSocket's open event, Date.now()) and firstFrameAt (JSMpeg's
 * onVideoDecode, called after each decoded frame).
 */
export async function viewerPage(browser) {
  const page = await browser.newPage({ viewport: { width: 720, height: 300 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.setContent('<!doctype html><html><body style="margin:0;background:#222"></body></html>');
  await page.addScriptTag({ path: JSMPEG });
  await page.evaluate(() => {
    const opened = new Map();
    const Native = window.WebSocket;
    window.WebSocket = class extends Native {
      constructor(url, protocols) {
        super(url, protocols);
        this.addEventListener('open', () => opened.set(url, Date.now()));
      }
    };
    window.__viewers = {};
    window.__join = (url, id) => {
      const canvas = document.createElement('canvas');
      canvas.id = id;
      canvas.width = 320;
      canvas.height = 240;
      canvas.style.margin = '10px';
      document.body.appendChild(canvas);
      const v = { url, openAt: null, firstFrameAt: null, frames: 0 };
      window.__viewers[id] = v;
      v.player = new window.JSMpeg.Player(url, {
        canvas, audio: false, disableGl: true, reconnectInterval: 0,
        onVideoDecode: () => {
          v.frames++;
          if (v.firstFrameAt === null) {
            v.firstFrameAt = Date.now();
            v.openAt = opened.get(url) ?? null;
          }
        },
      });
    };
    window.__state = (id) => {
      const v = window.__viewers[id];
      return { url: v.url, openAt: v.openAt ?? opened.get(v.url) ?? null, firstFrameAt: v.firstFrameAt, frames: v.frames };
    };
    // Distinct colours in the canvas: a decoded test pattern has many, a blank canvas one.
    window.__colours = (id) => {
      const c = document.getElementById(id);
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < d.length; i += 4 * 97) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      return seen.size;
    };
  });
  return { page, errors };
}

/** Starts one player per stream in the page, all in one task, and returns the ids. */
export async function join(page, port, streams) {
  const ids = streams.map((s) => s.replace(/[^a-z0-9]/gi, '_'));
  await page.evaluate(({ urls, ids }) => urls.forEach((u, i) => window.__join(u, ids[i])),
    { urls: streams.map((s) => `ws://127.0.0.1:${port}${s}`), ids });
  return ids;
}

/** Waits (bounded) until every viewer decoded a frame; returns their states. */
export async function firstFrames(page, ids, timeoutMs) {
  await page.waitForFunction((ids) => ids.every((id) => window.__viewers[id].firstFrameAt !== null), ids,
    { timeout: timeoutMs, polling: 20 });
  return Promise.all(ids.map((id) => page.evaluate((id) => window.__state(id), id)));
}

// examples/python/publish.py and subscribe.py against the real relay, with access control, which is
// killed (SIGKILL: no close frame, the clients see their connections just end) and started again on
// the same port in the middle: both must come back by themselves, and readings must flow again,
// within a bound. And the contract's stops: a token the relay refuses (HTTP 401) or that expires
// (close 1008) ends the example with a message rather than retrying.
//
// Run after `./mvnw -B -ntp -q package -DskipTests`, with the examples' venv (src/e2e/README.md):
//   cd src/e2e && node --test examples-python.test.mjs
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { freePort } from './lib/live-video.mjs';
import { AUTH_ARGS, Relay, checkInstalled, runPython, token, waitFor } from './lib/examples.mjs';

/** The relay takes about 1-3 s to start; the clients' back-off is at most 0.5 + 1 + 2 + 4 + 8 s by then. */
const BACK_WITHIN_MS = 25000;

describe('the Python publisher and subscriber', () => {
  let relay;
  let publisher;
  let subscriber;

  before(async () => {
    checkInstalled();
    relay = await new Relay(await freePort(), ['--route', '/sensor/**:start=last', ...AUTH_ARGS]).start();
  });

  after(async () => {
    await publisher?.stop();
    await subscriber?.stop();
    await relay?.stop('SIGKILL');
  });

  const readings = () => subscriber.lines.map((line) => JSON.parse(line));
  const lastSeq = () => readings().reduce((max, r) => Math.max(max, r.seq), 0);

  it('carry on after the relay is killed and started again', async () => {
    subscriber = runPython('subscribe.py', [`${relay.url}/out/sensor/1`], { env: { CROSSBAR_TOKEN: token('/out/sensor/1', 'read') } });
    publisher = runPython('publish.py', ['--interval', '0.1', `${relay.url}/in/sensor/1`],
      { env: { CROSSBAR_TOKEN: token('/in/sensor/1', 'write') } });
    const report = () => `\npublisher:\n${publisher.log}\nsubscriber:\n${subscriber.log}\nlines: ${subscriber.lines.slice(-5).join('\n')}`;

    await waitFor(() => lastSeq() >= 10, 15000, () => `ten readings reach the subscriber${report()}`);
    for (const r of readings()) {
      assert.equal(typeof r.angle, 'number', `a reading: ${JSON.stringify(r)}`);
      assert.equal(typeof r.time, 'number');
    }

    await relay.stop('SIGKILL');
    const beforeRestart = lastSeq();
    const killedAt = Date.now();
    await relay.start();
    await waitFor(() => lastSeq() >= beforeRestart + 10, BACK_WITHIN_MS, () => `readings flow again after the restart${report()}`);
    console.log(`# back ${Date.now() - killedAt} ms after the kill (relay start included)`);

    // Both saw their connection end and came back (each logs each connection).
    assert.ok(publisher.proc.exitCode === null && subscriber.proc.exitCode === null, `both still run${report()}`);
    assert.equal(publisher.log.match(/connected to/g)?.length, 2, report());
    assert.equal(subscriber.log.match(/connected to/g)?.length, 2, report());
    // In order; each reading once, but for the start=last replay of the last one on reconnecting.
    const seqs = readings().map((r) => r.seq);
    for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i] >= seqs[i - 1], `in order: ${seqs.join(',')}`);
  });

  /** Runs subscribe.py with `jwt` until it exits by itself (bounded); returns its exit code and log. */
  async function exits(jwt, withinMs) {
    const example = runPython('subscribe.py', [`${relay.url}/out/sensor/1`], { env: { CROSSBAR_TOKEN: jwt } });
    try {
      const code = await Promise.race([example.exited, new Promise((r) => setTimeout(r, withinMs, 'running').unref())]);
      return { code, log: example.log };
    } finally {
      await example.stop();
    }
  }

  it('stops, saying why, when the relay refuses its token (401) rather than retrying it', async () => {
    const { code, log } = await exits(token('/out/sensor/1', 'read', -60), 10000);
    assert.equal(code, 1, log);
    assert.match(log, /refused: 401 Unauthorized: token expired/);
  });

  it('stops, saying why, when its token expires (close 1008) rather than retrying it', async () => {
    const { code, log } = await exits(token('/out/sensor/1', 'read', 2), 15000);
    assert.equal(code, 1, log);
    assert.match(log, /connected to/);
    assert.match(log, /closed 1008 token expired: get a new token/);
  });
});

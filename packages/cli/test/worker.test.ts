import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type PostbackProcess,
  spawnPostback,
  stopProcess,
  waitUntil,
} from '../../../test/helpers/worker-process.ts';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';
import { type DbFixture, dbFixture } from './db-fixture.ts';

let db: DbFixture;
// Set in beforeEach; possibly unset when starting the sandbox failed.
let world: SandboxWorld;
const spawned: PostbackProcess[] = [];

beforeEach(async () => {
  db = dbFixture();
  world = await startSandboxWorld();
});
afterEach(async () => {
  for (const proc of spawned.splice(0)) await stopProcess(proc);
  await world?.close();
  db.cleanup();
});

async function enqueueClicks(n: number, prefix = 'w'): Promise<void> {
  const clicks = await world.clicks(n);
  const outbox = db.open();
  for (const [i, click] of clicks.entries()) {
    await outbox.confirm({
      orderId: `${prefix}-${i}`,
      valueMicros: 1_000 + i,
      click: { token: click.token, clickedAt: click.clickedAt },
    });
  }
  await outbox.close();
}

async function counts() {
  const outbox = db.open();
  try {
    return (await outbox.stats(Date.now())).counts;
  } finally {
    await outbox.close();
  }
}

const FAST = [
  '--poll-ms',
  '20',
  '--backoff-base-ms',
  '20',
  '--backoff-max-ms',
  '100',
  '--backoff-min-ms',
  '10',
];

describe('postback worker (in process)', () => {
  it('delivers queued confirmations, then stops with exit 0 when its stop signal fires', async () => {
    await enqueueClicks(20);
    const io = captureIo({ env: { POSTBACK_API_KEY: world.conversionsKey } });
    const running = main(['worker', '--db', db.file, '--base-url', world.url, ...FAST], io);
    await waitUntil(async () => (await world.conversions()).conversions.length === 20, 15_000);
    io.controller.abort();
    expect(await running).toBe(0);
    expect(await counts()).toMatchObject({ delivered: 20, pending: 0, inflight: 0 });
    expect(io.err()).toMatch(/worker\.started/);
    expect(io.err()).toMatch(/worker\.stopped/);
    expect(io.out()).toBe('');
  });

  it('logs one JSON object per line with --log json, including a dead job and its reason, and never the API key', async () => {
    const outbox = db.open();
    // A token the service never issued: the service answers 404 and the job goes dead.
    await outbox.confirm({
      orderId: 'unknown-click',
      valueMicros: 1,
      click: { token: 'tok_never_issued_by_the_service', clickedAt: Date.now() },
    });
    await outbox.close();
    await enqueueClicks(3, 'ok');
    const io = captureIo({ env: { POSTBACK_API_KEY: world.conversionsKey } });
    const running = main(['worker', '--db', db.file, '--base-url', world.url, '--log', 'json', ...FAST], io);
    await waitUntil(async () => {
      const c = await counts();
      return c.delivered === 3 && c.dead === 1;
    }, 15_000);
    io.controller.abort();
    expect(await running).toBe(0);
    const lines = io.err().trim().split('\n');
    const events = lines.map((line) => JSON.parse(line) as { msg: string; level: number; time: number });
    expect(events[0]).toMatchObject({ msg: 'worker.started', level: 30, apiKey: 'set' });
    expect(events.at(-1)).toMatchObject({ msg: 'worker.stopped' });
    const dead = lines.find((line) => line.includes('unknown-click') && /"level":50/.test(line));
    expect(dead).toMatch(/404|not found/i);
    expect(io.out() + io.err()).not.toContain(world.conversionsKey);
  });

  it('with --drain, exits 0 by itself once nothing is due', async () => {
    await enqueueClicks(5);
    const io = captureIo({ env: { POSTBACK_API_KEY: world.conversionsKey } });
    const code = await main(['worker', '--db', db.file, '--base-url', world.url, '--drain', ...FAST], io);
    expect(code).toBe(0);
    expect(await counts()).toMatchObject({ delivered: 5, pending: 0, inflight: 0 });
  });

  it('with --drain, waits for its own retries due within seconds: two 503s then a 200 deliver in the same run, each request counted', async () => {
    await enqueueClicks(2);
    await world.setFaults({ fail_next: 2, error_status: 503 });
    // The default backoff (no FAST flags): each retry is due within a second or two.
    const io = captureIo({ env: { POSTBACK_API_KEY: world.conversionsKey } });
    const code = await main(
      ['worker', '--db', db.file, '--base-url', world.url, '--drain', '--log', 'json'],
      io,
    );
    expect(code, io.err()).toBe(0);
    expect(await counts()).toMatchObject({ delivered: 2, pending: 0 });
    const drained = io
      .err()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((e) => e.msg === 'worker.drained');
    expect(drained).toMatchObject({ delivered: 2, retried: 2 });
  });

  it('with --drain, ends with one info line counting what it did (what a cron log keeps)', async () => {
    const outbox = db.open();
    await outbox.confirm({
      orderId: 'never-issued',
      valueMicros: 1,
      click: { token: 'tok_never_issued_by_the_service', clickedAt: Date.now() },
    });
    await outbox.close();
    await enqueueClicks(3);
    const io = captureIo({ env: { POSTBACK_API_KEY: world.conversionsKey } });
    const code = await main(
      ['worker', '--db', db.file, '--base-url', world.url, '--drain', '--log', 'json', ...FAST],
      io,
    );
    expect(code, io.err()).toBe(0);
    const events = io
      .err()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const drained = events.filter((e) => e.msg === 'worker.drained');
    expect(drained).toHaveLength(1);
    expect(drained[0]).toMatchObject({
      level: 30,
      claimed: 4,
      delivered: 3,
      retried: 0,
      dead: 1,
      expired: 0,
      deferred: 0,
    });
    // After the stop: nothing it counts can change any more.
    expect(events.findIndex((e) => e.msg === 'worker.drained')).toBeGreaterThan(
      events.findIndex((e) => e.msg === 'worker.stopped'),
    );
  });

  it('with --drain, waits out the pause of a 429 (its Retry-After) and delivers everything, at full pace by default', async () => {
    await enqueueClicks(6);
    await world.setFaults({ rate_limit_per_s: 2 }); // 429 with Retry-After: 1 once over 2 a second
    const io = captureIo({ env: { POSTBACK_API_KEY: world.conversionsKey } });
    const code = await main(
      ['worker', '--db', db.file, '--base-url', world.url, '--drain', '--log', 'json', ...FAST],
      io,
    );
    expect(code, io.err()).toBe(0);
    expect(await counts()).toMatchObject({ delivered: 6, pending: 0, inflight: 0 });
    const events = io
      .err()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events[0]).toMatchObject({ msg: 'worker.started', pace: 'off', concurrency: 4 });
    expect(events).toContainEqual(
      expect.objectContaining({ msg: 'paused', status: 429, cause: 'rate-limited' }),
    );
    // A 429 burns no attempt and is no durable retry.
    expect(events.filter((e) => e.msg === 'retried')).toEqual([]);
  });

  it('names itself in its heart-beats by this machine, this process and the version of the CLI', async () => {
    const io = captureIo({ env: { POSTBACK_API_KEY: world.conversionsKey } });
    const running = main(['worker', '--db', db.file, '--base-url', world.url, ...FAST], io);
    try {
      let beat: Record<string, unknown> | undefined;
      await waitUntil(async () => {
        const status = captureIo();
        if ((await main(['status', '--db', db.file, '--json'], status)) !== 0) return false;
        beat = JSON.parse(status.out()).workers[0];
        return beat !== undefined;
      }, 15_000);
      const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
      expect(beat).toMatchObject({ version, host: hostname(), pid: process.pid });
      // host:pid:random, as the README's examples show it.
      const id = /^([^:]+):(\d+):([0-9a-f]{8})$/;
      expect(beat?.workerId).toMatch(id);
      expect(beat?.workerId).toMatch(new RegExp(`^${hostname()}:${process.pid}:`));
      const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
      const shown = [...readme.matchAll(/shop-1:\d+:[^)"`\s]*/g)].map((m) => m[0]);
      expect(shown.length).toBeGreaterThan(0);
      for (const example of shown) expect(example).toMatch(id);
    } finally {
      io.controller.abort();
    }
    expect(await running, io.err()).toBe(0);
  });

  it('with --drain, exits 4 (not 0) when the service refuses the key, leaving the jobs pending, and never prints the key', async () => {
    await enqueueClicks(3);
    const badKey = 'sk_live_not_a_key_of_this_account_0123456789';
    const io = captureIo({ env: { POSTBACK_API_KEY: badKey } });
    const code = await main(['worker', '--db', db.file, '--base-url', world.url, '--drain', ...FAST], io);
    expect(code, io.err()).toBe(4);
    expect(io.err()).toMatch(/delivery paused.*API key.*40[13]/);
    expect(await counts()).toMatchObject({ pending: 3, inflight: 0, delivered: 0, dead: 0 });
    expect(io.out() + io.err()).not.toContain(badKey);
  });

  it('with --drain, exits 4 again on the next run with the same refused key: the pause is not written into the jobs', async () => {
    await enqueueClicks(2);
    const badKey = 'sk_live_not_a_key_of_this_account_0123456789';
    const run = async () => {
      const io = captureIo({ env: { POSTBACK_API_KEY: badKey } });
      return main(['worker', '--db', db.file, '--base-url', world.url, '--drain', ...FAST], io);
    };
    expect(await run()).toBe(4);
    expect(await run()).toBe(4);
    expect(await counts()).toMatchObject({ pending: 2, delivered: 0, dead: 0 });
    // The drain run left a beat that says so: the cron's status check alerts between two runs.
    const io = captureIo();
    expect(await main(['status', '--db', db.file, '--fail-on-paused'], io), io.out()).toBe(12);
  });

  it("with --drain, exits 5 when the base URL answers 404s that are not the service's (a configuration error), dead-lettering nothing", async () => {
    await enqueueClicks(2);
    // A base URL with a wrong path in front of a web server: plain 404 pages, no JSON `detail`.
    const server = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const io = captureIo({ env: { POSTBACK_API_KEY: world.conversionsKey } });
      const args = [
        'worker',
        '--db',
        db.file,
        '--base-url',
        `http://127.0.0.1:${port}/api`,
        '--drain',
        ...FAST,
      ];
      const code = await main(args, io);
      expect(code, io.err()).toBe(5);
      expect(io.err()).toMatch(/delivery paused.*--base-url/);
      expect(await counts()).toMatchObject({ pending: 2, inflight: 0, dead: 0 });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('exits 2 naming POSTBACK_API_KEY when it is not set, and the base URL when none is given', async () => {
    const noKey = captureIo({ env: { POSTBACK_API_URL: world.url } });
    expect(await main(['worker', '--db', db.file], noKey)).toBe(2);
    expect(noKey.err()).toMatch(/POSTBACK_API_KEY/);
    const noUrl = captureIo({ env: { POSTBACK_API_KEY: 'k' } });
    expect(await main(['worker', '--db', db.file], noUrl)).toBe(2);
    expect(noUrl.err()).toMatch(/--base-url|POSTBACK_API_URL/);
    const badUrl = captureIo({ env: { POSTBACK_API_KEY: 'k' } });
    expect(await main(['worker', '--db', db.file, '--base-url', 'ftp://x'], badUrl)).toBe(2);
    expect(
      await main(
        ['worker', '--db', db.file, '--base-url', world.url, '--concurrency', '0'],
        captureIo({ env: { POSTBACK_API_KEY: 'k' } }),
      ),
    ).toBe(2);
  });

  it('exits 2 naming POSTBACK_API_KEY when it is blank or ends in a CR, before the database is created', async () => {
    for (const key of ['   ', `${world.conversionsKey}\r`]) {
      const io = captureIo({ env: { POSTBACK_API_KEY: key } });
      const code = await main(['worker', '--db', db.file, '--base-url', world.url, '--drain'], io);
      expect(code, io.err()).toBe(2);
      expect(io.err()).toMatch(/^postback worker: POSTBACK_API_KEY (is blank|must be printable ASCII)/);
      expect(io.err()).not.toContain(world.conversionsKey);
      expect(existsSync(db.file)).toBe(false);
    }
  });

  it('exits 3 when the database cannot be opened', async () => {
    const io = captureIo({ env: { POSTBACK_API_KEY: world.conversionsKey } });
    const code = await main(
      ['worker', '--db', join(db.dir, 'no', 'such', 'dir', 'x.db'), '--base-url', world.url],
      io,
    );
    expect(code).toBe(3);
    expect(io.err()).toMatch(/cannot open the backend/);
  });
});

describe('postback worker (the real binary)', () => {
  it('stops gracefully on SIGTERM while sends are in flight: exit code 0 and nothing left inflight', async () => {
    await enqueueClicks(60);
    await world.setFaults({ latency_ms: 400 });
    const proc = spawnPostback(
      ['worker', '--db', db.file, '--base-url', world.url, '--concurrency', '10', '--log', 'json', ...FAST],
      {
        POSTBACK_API_KEY: world.conversionsKey,
      },
    );
    spawned.push(proc);
    await proc.waitForLine(/"event":"worker.started"/, 15_000);
    expect(proc.stdout).toEqual([]);
    await waitUntil(async () => (await counts()).inflight > 0, 10_000, 20);
    proc.child.kill('SIGTERM');
    const exit = await proc.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    const after = await counts();
    expect(after.inflight).toBe(0);
    expect(after.delivered + after.pending).toBe(60);
    expect(proc.stderr.join('\n')).toMatch(/"event":"worker.stopped"/);
    expect(proc.stdout.join('\n') + proc.stderr.join('\n')).not.toContain(world.conversionsKey);
  }, 40_000);
});

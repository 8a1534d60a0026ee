/**
 * A `worker --drain` that meets a long 429 says so: it exits 6 (`EXIT.rateLimited`) with "rate-limited
 * until <ISO time>" instead of exit 5 "check --base-url" (exit 4 "check --keys-file" with per-account
 * keys), waits a `Retry-After` out only when it ends within the run's bound and before the nearest
 * deadline, and `status --fail-on-paused` names the cause of each pause. Through the CLI, against the
 * sandbox answering every request `429` with `Retry-After`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../src/args.ts';
import { main } from '../src/main.ts';
import { STATUS_EXIT } from '../src/specs/status.ts';
import { captureIo } from './capture-io.ts';
import { type DbFixture, dbFixture } from './db-fixture.ts';

let db: DbFixture;
let world: SandboxWorld;
let dir: string;

beforeEach(async () => {
  db = dbFixture();
  world = await startSandboxWorld();
  dir = mkdtempSync(join(tmpdir(), 'postback-drain-429-'));
});
afterEach(async () => {
  await world?.close();
  db.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** Queues `n` confirmations (of `account`, when given), clicked `clickedAgoMs` ago (now by default). */
async function enqueue(n: number, options: { account?: string; clickedAgoMs?: number } = {}): Promise<void> {
  const clicks = await world.clicks(n);
  const outbox = db.open();
  for (const [i, click] of clicks.entries()) {
    await outbox.confirm({
      orderId: `o-${i}`,
      valueMicros: 1_000 + i,
      click: {
        token: click.token,
        clickedAt: options.clickedAgoMs === undefined ? click.clickedAt : Date.now() - options.clickedAgoMs,
      },
      ...(options.account === undefined ? {} : { account: options.account }),
    });
  }
  await outbox.close();
}

async function drain(extra: string[] = [], env: Record<string, string> = {}) {
  const io = captureIo({ env: { POSTBACK_API_KEY: world.conversionsKey, ...env } });
  const started = Date.now();
  const code = await main(
    ['worker', '--db', db.file, '--base-url', world.url, '--drain', '--poll-ms', '20', ...extra],
    io,
  );
  return { code, err: io.err(), tookMs: Date.now() - started };
}

async function pending(): Promise<number> {
  const outbox = db.open();
  try {
    return (await outbox.stats(Date.now())).counts.pending;
  } finally {
    await outbox.close();
  }
}

/** The ISO time in "rate-limited until <ISO>", as epoch ms. */
function limitedUntil(err: string): number {
  const iso = /rate-limited until (\S+Z)\b/.exec(err)?.[1];
  expect(iso, err).toBeDefined();
  return Date.parse(iso as string);
}

const SEVEN_DAYS = 7 * 24 * 3_600_000;
const HOUR = 3_600_000;

describe('worker --drain meeting a long 429', () => {
  it('exits 6 saying "rate-limited until" the Retry-After ends, its jobs left pending; status names the rate limit', async () => {
    await enqueue(3);
    await world.setFaults({ error_rate: 1, error_status: 429, retry_after_s: 600 });
    const before = Date.now();
    const run = await drain();
    expect(run.code, run.err).toBe(EXIT.rateLimited);
    expect(run.code).toBe(6);
    expect(run.err).toMatch(
      /postback worker: rate-limited until \S+Z, jobs left pending for the next run: Ad service answered 429/,
    );
    expect(run.err).not.toMatch(/check --base-url|check --keys-file|not the ad service/);
    const until = limitedUntil(run.err);
    expect(until).toBeGreaterThanOrEqual(before + 590_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 601_000);
    // Not waited out: 600 s is past the run's bound (5 min).
    expect(run.tookMs).toBeLessThan(20_000);
    expect(await pending()).toBe(3);

    const status = captureIo();
    expect(await main(['status', '--db', db.file, '--fail-on-paused'], status)).toBe(STATUS_EXIT.paused);
    expect(status.err()).toMatch(
      /postback status: alert: delivery is paused by a worker: \S+ \(rate limit: the service answered 429, until \S+Z\): Ad service answered 429/,
    );
    expect(status.err()).not.toMatch(/key refused or missing/);
    expect(status.out()).toMatch(/paused until \S+Z \([^)]*\) \(rate-limit\): Ad service answered 429/);
    const json = captureIo();
    await main(['status', '--db', db.file, '--json'], json);
    expect(JSON.parse(json.out()).workers[0]).toMatchObject({ state: 'paused', pauseCause: 'rate-limit' });
  }, 60_000);

  it('with per-account keys, exits 6 naming the accounts rate-limited (not exit 4, "check --keys-file"); status says rate limit per account', async () => {
    await enqueue(2, { account: 'shop-a' });
    const keysFile = join(dir, 'keys.json');
    writeFileSync(keysFile, JSON.stringify({ 'shop-a': world.conversionsKey }), { mode: 0o600 });
    await world.setFaults({ error_rate: 1, error_status: 429, retry_after_s: 600 });
    const run = await drain(['--keys-file', keysFile], { POSTBACK_API_KEY: '' });
    expect(run.code, run.err).toBe(EXIT.rateLimited);
    expect(run.err).toMatch(
      /postback worker: rate-limited until \S+Z, the jobs of 1 account\(s\) left pending for the next run: "shop-a" until \S+Z/,
    );
    expect(run.err).not.toMatch(/check --keys-file/);
    expect(await pending()).toBe(2);

    const status = captureIo();
    expect(await main(['status', '--db', db.file, '--fail-on-paused'], status)).toBe(STATUS_EXIT.paused);
    expect(status.err()).toMatch(
      /alert: 1 account\(s\) paused: shop-a \(rate limit: the service answered 429, until \S+Z\)/,
    );
  }, 60_000);

  it('does not wait out a Retry-After that ends after the nearest deadline, even within its bound', async () => {
    // Deadline: click + 7 days − the 1 h safety margin, so 20 s from now; the service asks for 60 s.
    await enqueue(1, { clickedAgoMs: SEVEN_DAYS - HOUR - 20_000 });
    await world.setFaults({ error_rate: 1, error_status: 429, retry_after_s: 60 });
    const run = await drain(['--rate-limit-wait', '10m']);
    expect(run.code, run.err).toBe(EXIT.rateLimited);
    expect(run.tookMs).toBeLessThan(15_000);
    expect(run.err).toMatch(/rate-limited until \S+Z/);
  }, 60_000);

  it('does not wait out a Retry-After longer than --rate-limit-wait', async () => {
    await enqueue(2);
    await world.setFaults({ error_rate: 1, error_status: 429, retry_after_s: 3 });
    const short = await drain(['--rate-limit-wait', '1s']);
    expect(short.code, short.err).toBe(EXIT.rateLimited);
    expect(short.tookMs).toBeLessThan(3_000);
    expect(await pending()).toBe(2);
  }, 60_000);

  it('waits out a Retry-After that ends within --rate-limit-wait and before every deadline, and delivers', async () => {
    await enqueue(2);
    // One 429 asking for 2 s, then the service answers: a run that may wait 10 s delivers everything.
    await world.setFaults({ fail_next: 1, error_status: 429, retry_after_s: 2 });
    const fits = await drain(['--rate-limit-wait', '10s']);
    expect(fits.code, fits.err).toBe(EXIT.ok);
    expect(await pending()).toBe(0);
  }, 60_000);
});

/**
 * `promtool check metrics` (Prometheus' own checker) on a real worker's `/metrics`, with a job in every
 * state, a paused account, a held job and open jobs in every deadline bucket: it reports nothing. promtool comes from
 * Debian's `prometheus` package (`npm test`'s preflight installs it); without it the test is skipped and
 * says how to install it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JOB_STATES, type Outbox } from '@postback/core';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promtoolInstallCommand } from '../../../scripts/preflight-plan.ts';
import {
  type PostbackProcess,
  spawnPostback,
  stopProcess,
  waitUntil,
} from '../../../test/helpers/worker-process.ts';
import { type DbFixture, dbFixture, token } from './db-fixture.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Click time whose confirm deadline (click + 7 days − the 1 h safety margin) is `left` from now. */
const clickLeaving = (left: number) => Date.now() + left - 7 * DAY + HOUR;

let db: DbFixture;
let world: SandboxWorld;
let dir: string;
let worker: PostbackProcess | undefined;
beforeEach(async () => {
  db = dbFixture();
  world = await startSandboxWorld();
  dir = mkdtempSync(join(tmpdir(), 'postback-promtool-'));
});
afterEach(async () => {
  if (worker !== undefined) await stopProcess(worker);
  worker = undefined;
  await world?.close();
  db.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** One confirmation, claimed at once (so the next claim cannot take another job). */
async function claimed(outbox: Outbox, orderId: string, account: string, clickedAt = Date.now()) {
  await outbox.confirm({ account, orderId, valueMicros: 1_000, click: { token: token(9), clickedAt } });
  const [job] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 10 * 60_000 });
  if (job === undefined || job.orderId !== orderId) throw new Error(`could not claim ${orderId}`);
  return job;
}

/** Jobs in every state but delivered (the worker delivers those), and open jobs in every deadline bucket. */
async function seed(): Promise<void> {
  const outbox = db.open();
  // unmatched: a reversal the service had no conversion for.
  await outbox.refund({ account: 'shop-good', orderId: 'unmatched-0', campaignId: 'cmp_unmatched' });
  const [reversal] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 10 * 60_000 });
  if (reversal === undefined) throw new Error('could not claim unmatched-0');
  await outbox.fail(reversal, { now: Date.now(), state: 'unmatched', reason: 'no such conversion' });
  // inflight: held by another worker's lease; a refund behind it waits without a deadline (+Inf only).
  await claimed(outbox, 'held-0', 'shop-held');
  await outbox.refund({ account: 'shop-held', orderId: 'held-0' });
  const dead = await claimed(outbox, 'dead-0', 'shop-good');
  await outbox.fail(dead, { now: Date.now(), state: 'dead', reason: 'refused: 422 unknown click' });
  const expired = await claimed(outbox, 'expired-0', 'shop-good');
  await outbox.fail(expired, { now: Date.now(), state: 'expired', reason: 'deadline passed' });
  await outbox.confirm({
    account: 'shop-good',
    orderId: 'cancel-0',
    valueMicros: 1_000,
    click: { token: token(8), clickedAt: Date.now() },
  });
  await outbox.refund({ account: 'shop-good', orderId: 'cancel-0' });
  // pending, held: its campaign is not on s2s (probed again in 10 minutes; the worker leaves it).
  const hold = await claimed(outbox, 'pixel-0', 'shop-hold');
  const error = 'campaign cmp_pix is not on s2s';
  const at = Date.now();
  await outbox.retry(hold, { now: at, nextAttemptAt: at + 600_000, error, hold: { campaignId: 'cmp_pix' } });
  // pending in the paused account, one deadline in each bucket: 1 h, 6 h, 24 h, 3 d, 7 d.
  for (const [i, left] of [0.5 * HOUR, 3 * HOUR, 20 * HOUR, 2 * DAY, 6 * DAY].entries()) {
    await outbox.confirm({
      account: 'shop-paused',
      orderId: `paused-${i}`,
      valueMicros: 1_000,
      click: { token: token(i), clickedAt: clickLeaving(left) },
    });
  }
  // delivered by the worker.
  for (const [i, click] of (await world.clicks(3)).entries()) {
    await outbox.confirm({ account: 'shop-good', orderId: `good-${i}`, valueMicros: 1_000, click });
  }
  await outbox.close();
}

describe('the worker’s /metrics under promtool', () => {
  it('passes `promtool check metrics` with jobs in every state, a paused account and every deadline bucket', async (ctx) => {
    const version = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
    if (version.error !== undefined) {
      return ctx.skip(`promtool is not installed; install it with: ${promtoolInstallCommand(false)}`);
    }
    await seed();
    const keysFile = join(dir, 'keys.json');
    writeFileSync(
      keysFile,
      JSON.stringify({
        'shop-good': world.conversionsKey,
        'shop-held': world.conversionsKey,
        'shop-paused': 'pbsk_refused_key_of_shop_paused_0123',
      }),
    );
    const w = spawnPostback(
      [
        'worker',
        '--db',
        db.file,
        '--base-url',
        world.url,
        '--keys-file',
        keysFile,
        '--poll-ms',
        '50',
        '--log',
        'json',
        '--metrics-port',
        '0',
      ],
      {},
    );
    worker = w;
    const url = (JSON.parse(await w.waitForLine(/worker\.metrics/, 20_000)) as { url: string }).url;
    const scrape = async () => (await fetch(`${url}/metrics`)).text();
    let text = '';
    await waitUntil(async () => {
      text = await scrape();
      return (
        /^postback_jobs_delivered_total\{kind="confirm"\} 3$/m.test(text) &&
        /^postback_account_paused\{account="shop-paused"\} 1$/m.test(text)
      );
    }, 20_000);

    // What the exposition holds is what the test claims to check.
    for (const state of JOB_STATES) {
      expect(text).toMatch(new RegExp(`^postback_jobs\\{state="${state}"\\} [1-9]\\d*$`, 'm'));
    }
    const bucket = (within: string) => {
      const prefix = `postback_open_jobs_by_deadline{within_seconds="${within}"} `;
      return Number(
        text
          .split('\n')
          .find((l) => l.startsWith(prefix))
          ?.slice(prefix.length),
      );
    };
    expect(['3600', '21600', '86400', '259200', '604800', '+Inf'].map(bucket)).toEqual([1, 2, 3, 4, 7, 8]);
    expect(text).toMatch(/^postback_held_jobs\{account="shop-hold",campaign="cmp_pix"\} 1$/m);
    expect(text).toMatch(/^postback_held_order_value\{account="shop-hold",campaign="cmp_pix"\} 0\.001$/m);
    expect(text).toMatch(/^postback_build_info\{version="\d+\.\d+\.\d+[^"]*"\} 1$/m);
    expect(text).toMatch(/^postback_delivery_paused_until_timestamp_seconds 0$/m);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect(text).toMatch(
      /^postback_send_duration_seconds_bucket\{le="0.005",kind="confirm",outcome="delivered"\} /m,
    );

    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect({ status: check.status, stdout: check.stdout, stderr: check.stderr }).toEqual({
      status: 0,
      stdout: '',
      stderr: '',
    });

    w.child.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
  }, 90_000);
});

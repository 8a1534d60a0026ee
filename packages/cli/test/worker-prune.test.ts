/**
 * The worker's routines: the scheduled prune (old final jobs and old clicks) and the summary line, over
 * a real SQLite file. No job is due, so the worker never calls the service.
 */
import { DAY_MS } from '@postback/core';
import { createSqliteOutbox } from '@postback/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../../test/helpers/worker-process.ts';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';
import { type DbFixture, dbFixture, token } from './db-fixture.ts';

let db: DbFixture;
beforeEach(() => {
  db = dbFixture();
});
afterEach(() => db.cleanup());

/** A confirmation delivered `daysAgo` (clicked then), enqueued and delivered with a clock in the past. */
async function deliveredDaysAgo(orderId: string, daysAgo: number, i: number): Promise<void> {
  const at = Date.now() - daysAgo * DAY_MS;
  const outbox = createSqliteOutbox({ filename: db.file, now: () => at });
  try {
    await outbox.confirm({ orderId, valueMicros: 1_000, click: { token: token(i), clickedAt: at - 60_000 } });
    const [job] = await outbox.claim({ now: at, limit: 1, leaseMs: 60_000 });
    if (job === undefined) throw new Error('nothing claimed');
    await outbox.complete(job, { now: at, campaignId: 'cmp_1' });
  } finally {
    await outbox.close();
  }
}

async function orderIds(): Promise<string[]> {
  const outbox = db.open();
  try {
    return (await outbox.listJobs({})).map((j) => j.orderId).sort();
  } finally {
    await outbox.close();
  }
}

const lines = (err: string) =>
  err
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('postback worker routines', () => {
  it('prunes on its schedule: at start, then every --prune-every; and logs a summary at info', async () => {
    await deliveredDaysAgo('old-1', 40, 1);
    await deliveredDaysAgo('recent', 10, 2);
    const io = captureIo({ env: { POSTBACK_API_KEY: 'k_secret_value', POSTBACK_PRUNE_EVERY: '300ms' } });
    const running = main(
      [
        'worker',
        '--db',
        db.file,
        '--base-url',
        'http://127.0.0.1:1',
        '--log',
        'json',
        '--summary-every',
        '200ms',
        // The store's policy has no return window (400 days kept); the operator knows theirs.
        '--return-window',
        '30d',
      ],
      io,
    );
    try {
      await waitUntil(async () => !(await orderIds()).includes('old-1'), 15_000, 50);
      // Made prunable after the start: only a later run of the schedule can delete it.
      await deliveredDaysAgo('old-2', 40, 3);
      await waitUntil(async () => !(await orderIds()).includes('old-2'), 15_000, 50);
      await waitUntil(() => lines(io.err()).some((l) => l.msg === 'worker.summary'), 15_000, 50);
    } finally {
      io.controller.abort();
    }
    expect(await running, io.err()).toBe(0);
    // Inside its return window (--return-window 30d from delivery): kept.
    expect(await orderIds()).toEqual(['recent']);
    const logged = lines(io.err());
    const started = logged.find((l) => l.msg === 'worker.started');
    expect(started).toMatchObject({
      level: 30,
      apiKey: 'set',
      pruneEveryMs: 300,
      concurrency: expect.any(Number),
    });
    const pruned = logged.filter((l) => l.msg === 'worker.pruned');
    expect(pruned.length).toBeGreaterThanOrEqual(2);
    expect(pruned.reduce((n, l) => n + (l.pruned as number), 0)).toBe(2);
    expect(pruned[0]).toMatchObject({ clicks: 0 });
    expect(logged.find((l) => l.msg === 'worker.summary')).toMatchObject({
      level: 30,
      delivered: 0,
      retried: 0,
      dead: 0,
      expired: 0,
      depth: 0,
      atRisk: 0,
    });
    expect(io.err()).not.toContain('k_secret_value');
  });

  it('--prune-every off never prunes', async () => {
    await deliveredDaysAgo('old-1', 40, 1);
    const io = captureIo({ env: { POSTBACK_API_KEY: 'k' } });
    const code = await main(
      [
        'worker',
        '--db',
        db.file,
        '--base-url',
        'http://127.0.0.1:1',
        '--drain',
        '--prune-every',
        'off',
        '--log',
        'json',
      ],
      io,
    );
    expect(code, io.err()).toBe(0);
    expect(await orderIds()).toEqual(['old-1']);
    expect(lines(io.err()).some((l) => l.msg === 'worker.pruned')).toBe(false);
  });
});

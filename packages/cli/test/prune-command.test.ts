/**
 * `postback prune`: retention over a real SQLite file. Old final jobs go; a charged confirmation stays
 * until its return window closes; open and dead jobs are never pruned; old clicks are swept.
 */
import { DAY_MS } from '@postback/core';
import { createSqliteClickStore, createSqliteOutbox } from '@postback/sqlite';
import { describe, expect, it } from 'vitest';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { seedDead, token } from './db-fixture.ts';

setUpCommandHarness();

/** Enqueues a confirmation clicked `daysAgo`, and delivers it at that time (with a clock in the past). */
async function deliveredDaysAgo(orderId: string, daysAgo: number, i: number): Promise<string> {
  const at = Date.now() - daysAgo * DAY_MS;
  const outbox = createSqliteOutbox({ filename: db.file, now: () => at });
  try {
    await outbox.confirm({ orderId, valueMicros: 1_000, click: { token: token(i), clickedAt: at - 60_000 } });
    const [job] = await outbox.claim({ now: at, limit: 1, leaseMs: 60_000 });
    if (job === undefined) throw new Error('nothing claimed');
    await outbox.complete(job, { now: at, campaignId: 'cmp_1' });
    return job.id;
  } finally {
    await outbox.close();
  }
}

/** A confirmation clicked `daysAgo` and refunded before it was sent: cancelled then. */
async function cancelledDaysAgo(orderId: string, daysAgo: number, i: number): Promise<void> {
  const at = Date.now() - daysAgo * DAY_MS;
  const outbox = createSqliteOutbox({ filename: db.file, now: () => at });
  try {
    await outbox.confirm({ orderId, valueMicros: 1_000, click: { token: token(i), clickedAt: at - 60_000 } });
    await outbox.refund({ orderId });
  } finally {
    await outbox.close();
  }
}

async function orders(): Promise<Record<string, string>> {
  const outbox = db.open();
  try {
    return Object.fromEntries((await outbox.listJobs({})).map((j) => [`${j.orderId}/${j.kind}`, j.state]));
  } finally {
    await outbox.close();
  }
}

describe('postback prune', () => {
  it('deletes old final jobs, keeps a delivered confirmation for the retention (no return window configured), and never touches open or dead jobs', async () => {
    await deliveredDaysAgo('old-delivered', 40, 1);
    await deliveredDaysAgo('in-return-window', 10, 2);
    await cancelledDaysAgo('old-cancelled', 10, 3);
    const outbox = db.open();
    await seedDead(outbox, ['dead'], 'gone', Date.now() - 20 * DAY_MS);
    await outbox.confirm({
      orderId: 'pending',
      valueMicros: 1,
      click: { token: token(4), clickedAt: Date.now() },
    });
    await outbox.close();
    const clicks = createSqliteClickStore({ filename: db.file });
    await clicks.put('visitor-old', { token: token(5), clickedAt: Date.now() - 9 * DAY_MS });
    await clicks.put('visitor-new', { token: token(6), clickedAt: Date.now() });
    await clicks.close();
    const before = await orders();

    const dry = await run(['prune', '--db', db.file, '--older-than', '2d', '--dry-run', '--json']);
    expect(dry.code, dry.err).toBe(0);
    expect(JSON.parse(dry.out)).toEqual({
      dryRun: true,
      pruned: 1,
      olderThanMs: 2 * DAY_MS,
      returnWindowMs: 400 * DAY_MS,
    });
    expect(await orders()).toEqual(before);

    const { code, out, err } = await run(['prune', '--db', db.file, '--older-than', '2d']);
    expect(code, err).toBe(0);
    expect(out).toBe(
      'pruned 1 final job(s) older than 2d (charged confirmations kept 400d for refunds); swept 1 expired click(s)\n',
    );
    // Delivered 40 days ago: a refund may still come, and the service decides whether it is too late.
    expect(await orders()).toEqual({
      'old-delivered/confirm': 'delivered',
      'in-return-window/confirm': 'delivered',
      'pending/confirm': 'pending',
      'dead/confirm': 'dead',
    });
  });

  it('keeps everything younger than --older-than (default 30d), and honours a shorter --return-window', async () => {
    await deliveredDaysAgo('ten-days', 10, 1);
    const kept = await run(['prune', '--db', db.file, '--json']);
    expect(JSON.parse(kept.out)).toMatchObject({ pruned: 0, clicks: 0, olderThanMs: 30 * DAY_MS });
    const gone = await run([
      'prune',
      '--db',
      db.file,
      '--older-than',
      '1d',
      '--return-window',
      '7d',
      '--json',
    ]);
    expect(JSON.parse(gone.out)).toMatchObject({ pruned: 1, returnWindowMs: 7 * DAY_MS });
    expect(await orders()).toEqual({});
  });

  it('refuses --sqs and a bad duration (exit 2), and a missing file (exit 3)', async () => {
    expect((await run(['prune', '--sqs', 'https://sqs.example/q'])).code).toBe(2);
    expect((await run(['prune', '--db', db.file, '--older-than', '30'])).code).toBe(2);
    expect((await run(['prune', '--db', `${db.file}.missing`])).code).toBe(3);
  });
});

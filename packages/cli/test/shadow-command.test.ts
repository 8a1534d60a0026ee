/**
 * `postback shadow` in process on a SQLite file: its usage errors name what is wrong, `start` and `end`
 * persist and decide (a running worker's view is the Dispatcher's, tested in core), the text report shows
 * each day's orders beside what was recorded, and `end` without a time drops every recorded order.
 */
import type { Job, OutboxShadow } from '@postback/core';
import { describe, expect, it } from 'vitest';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { token } from './db-fixture.ts';

setUpCommandHarness();

/** Enqueues `n` orders and records each in shadow mode, as a worker does, on the test's own connection. */
async function recordOrders(n: number): Promise<Job[]> {
  const outbox = db.open();
  try {
    const now = Date.now();
    for (let i = 0; i < n; i++)
      await outbox.confirm({
        orderId: `ord_${i}`,
        valueMicros: 2_500_000,
        click: { token: token(i), clickedAt: now - 60_000 },
      });
    // Claimed once the clock has passed their creation (SQL stores claim nothing created in the future).
    const later = Date.now() + 1;
    const claimed = await outbox.claim({ now: later, limit: n, leaseMs: 60_000 });
    expect(claimed).toHaveLength(n);
    for (const job of claimed)
      expect(await (outbox.shadow as OutboxShadow).record(job, { now: later })).toBe('recorded');
    return claimed;
  } finally {
    await outbox.close();
  }
}

describe('postback shadow', () => {
  it('refuses a missing or unknown action, and flags meant for another action, naming them', async () => {
    expect(await run(['shadow', '--db', db.file])).toMatchObject({
      code: 2,
      err: expect.stringContaining('start, report or end'),
    });
    expect(await run(['shadow', 'pause', '--db', db.file])).toMatchObject({
      code: 2,
      err: expect.stringContaining('pause'),
    });
    const since = await run(['shadow', 'start', '--db', db.file, '--since', '7d']);
    expect(since).toMatchObject({ code: 2, err: expect.stringContaining('--since is for report') });
    const after = await run(['shadow', 'end', '--db', db.file, '--send-unbilled-after', 'yesterday']);
    expect(after).toMatchObject({
      code: 2,
      err: expect.stringContaining('--send-unbilled-after must be an ISO 8601 time'),
    });
  });

  it('starts shadow mode in the file, reports the recorded orders per day, and ends it dropping them', async () => {
    const started = await run(['shadow', 'start', '--db', db.file, '--json']);
    expect(started.code).toBe(0);
    expect(JSON.parse(started.out)).toMatchObject({ scope: 'all', account: null });
    await recordOrders(3);
    const status = await run(['status', '--db', db.file, '--json']);
    expect(JSON.parse(status.out).shadow).toEqual([
      { scope: 'all', account: null, since: JSON.parse(started.out).since },
    ]);
    expect((await run(['status', '--db', db.file])).out).toContain('shadow mode: on for the whole outbox');

    const report = await run(['shadow', 'report', '--db', db.file]);
    expect(report.code).toBe(0);
    expect(report.out).toContain('shadow mode on for the whole outbox');
    const today = new Date().toISOString().slice(0, 10);
    expect(report.out).toContain(`${today}\t3\t7.500000\t3\t7.500000\t0\t0\t0\t—`);
    expect(report.out).toContain('note: no --base-url: the spend is not read');

    const ended = await run(['shadow', 'end', '--db', db.file, '--as', 'ana', '--json']);
    expect(ended.code).toBe(0);
    expect(JSON.parse(ended.out)).toMatchObject({ ended: true, sent: 0, dropped: 3, sendCreatedFrom: null });
    // Each decision is in the ledger, naming who took it.
    const ledger = JSON.parse((await run(['ledger', '--db', db.file, '--json'])).out);
    const shadowEnds = ledger.rows.filter((row: { kind: string }) => row.kind === 'shadow-end');
    expect(shadowEnds).toHaveLength(3);
    for (const row of shadowEnds)
      expect(row).toMatchObject({ actor: 'ana', reason: expect.stringMatching(/^drop: /) });
    const after = JSON.parse((await run(['shadow', 'report', '--db', db.file, '--json'])).out);
    expect(after.settings).toEqual([]);
    expect(JSON.parse((await run(['status', '--db', db.file, '--json'])).out).shadow).toEqual([]);
    expect(after.days).toEqual(
      expect.arrayContaining([expect.objectContaining({ orders: 3, recorded: 0, dropped: 3 })]),
    );
  });
});

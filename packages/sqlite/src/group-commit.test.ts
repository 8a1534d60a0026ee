import { DatabaseSync } from 'node:sqlite';
import { JobValidationError } from '@postback/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type TempDatabase, tempDatabase } from '../test/temp-files.ts';
import { createSqliteOutbox, type SqliteOutbox } from './outbox.ts';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const clock = { now: () => T0 };
const click = () => ({ token: 'tok_group', clickedAt: clock.now() - 60_000 });

let temp: TempDatabase;
const opened: Array<{ close(): unknown }> = [];

function open(extra: Partial<Parameters<typeof createSqliteOutbox>[0]> = {}): SqliteOutbox {
  temp ??= tempDatabase();
  const outbox = createSqliteOutbox({ filename: temp.filename, now: clock.now, ...extra });
  opened.push(outbox);
  return outbox;
}

afterEach(async () => {
  for (const handle of opened.splice(0)) await handle.close();
  temp?.cleanup();
  temp = undefined as unknown as TempDatabase;
});

describe('group commit of enqueues', () => {
  it('commits 64 concurrent confirms in one transaction, and each caller gets its own created job', async () => {
    const outbox = open();
    const before = outbox.commits;
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        outbox.confirm({ orderId: `ord_${i}`, valueMicros: i, click: click() }),
      ),
    );
    expect(outbox.commits - before).toBe(1);
    expect(results.every((r) => r.created)).toBe(true);
    expect(new Set(results.map((r) => r.job.id)).size).toBe(64);
    expect(results.map((r) => r.job.orderId)).toEqual(Array.from({ length: 64 }, (_, i) => `ord_${i}`));
  });

  it('callers that re-enqueue as soon as their previous write resolved keep sharing transactions', async () => {
    const outbox = open();
    const before = outbox.commits;
    await Promise.all(
      Array.from({ length: 16 }, async (_, worker) => {
        for (let n = 0; n < 10; n++)
          await outbox.confirm({ orderId: `w${worker}_${n}`, valueMicros: 1, click: click() });
      }),
    );
    // 160 enqueues by 16 callers: one transaction per round of the 16, not one per job.
    expect(outbox.commits - before).toBeLessThanOrEqual(12);
    expect((await outbox.stats(clock.now())).counts.pending).toBe(160);
  });

  it('gives created: true to the first and created: false to the second when one order appears twice in a batch', async () => {
    const outbox = open();
    const [first, second] = await Promise.all([
      outbox.confirm({ orderId: 'ord_twice', valueMicros: 5, click: click() }),
      outbox.confirm({ orderId: 'ord_twice', valueMicros: 5, click: click() }),
    ]);
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    expect(second.job.id).toBe(first.job.id);
    expect(await outbox.getByOrder('ord_twice')).toHaveLength(1);
  });

  it('rejects only the call with bad input; the others of the same tick are committed', async () => {
    const outbox = open();
    const results = await Promise.allSettled([
      outbox.confirm({ orderId: 'ord_good_1', valueMicros: 1, click: click() }),
      outbox.confirm({ orderId: 'ord_bad', valueMicros: 1.5, click: click() }),
      outbox.refund({ orderId: 'ord_unknown' }), // no confirmation here and no campaignId: cannot be sent
      outbox.confirm({ orderId: 'ord_good_2', valueMicros: 2, click: click() }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    const bad = (results[1] as PromiseRejectedResult).reason;
    expect(bad).toBeInstanceOf(JobValidationError);
    expect(bad.field).toBe('valueMicros');
    expect((results[2] as PromiseRejectedResult).reason.field).toBe('campaignId');
    expect(await outbox.getByOrder('ord_good_1')).toHaveLength(1);
    expect(await outbox.getByOrder('ord_good_2')).toHaveLength(1);
    expect(await outbox.getByOrder('ord_bad')).toHaveLength(0);
    expect(await outbox.getByOrder('ord_unknown')).toHaveLength(0);
  });

  it('rejects every call of a batch whose transaction fails, and stores none of them', async () => {
    const outbox = open({ busyTimeoutMs: 0 });
    // Another connection holds the write lock, so the batch's BEGIN IMMEDIATE fails with SQLITE_BUSY.
    const other = new DatabaseSync(temp.filename);
    other.exec('BEGIN IMMEDIATE');
    const results = await Promise.allSettled([
      outbox.confirm({ orderId: 'ord_locked_1', valueMicros: 1, click: click() }),
      outbox.confirm({ orderId: 'ord_locked_2', valueMicros: 1, click: click() }),
    ]);
    other.exec('ROLLBACK');
    other.close();
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/locked|busy/i);
    expect(await outbox.getByOrder('ord_locked_1')).toEqual([]);
    // The connection is usable again once the lock is gone.
    expect((await outbox.confirm({ orderId: 'ord_locked_1', valueMicros: 1, click: click() })).created).toBe(
      true,
    );
  });

  it('commits writes still queued when close() is called, before closing the file', async () => {
    const outbox = open();
    const pending = outbox.confirm({ orderId: 'ord_at_close', valueMicros: 7, click: click() });
    await outbox.close();
    await expect(pending).resolves.toMatchObject({ created: true });
    const reopened = open();
    expect(await reopened.getByOrder('ord_at_close')).toHaveLength(1);
  });

  it('splits a burst larger than maxBatchSize into several transactions', async () => {
    const outbox = open({ maxBatchSize: 10 });
    const before = outbox.commits;
    await Promise.all(
      Array.from({ length: 35 }, (_, i) =>
        outbox.confirm({ orderId: `ord_b${i}`, valueMicros: 1, click: click() }),
      ),
    );
    expect(outbox.commits - before).toBe(4);
  });
});

describe('malformed calls never fail a shared batch', () => {
  it('rejects a transition given something that is not a claimed job, alone', async () => {
    const outbox = open();
    const results = await Promise.allSettled([
      outbox.confirm({ orderId: 'ord_ok', valueMicros: 1, click: click() }),
      outbox.complete({ id: '1' } as never, { now: T0 }),
      outbox.replay({ ids: 'all' } as never, T0),
      outbox.purgeDead({ ids: [1] } as never),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/job/);
    expect(String((results[2] as PromiseRejectedResult).reason)).toMatch(/ids/);
    expect(await outbox.getByOrder('ord_ok')).toHaveLength(1);
  });
});

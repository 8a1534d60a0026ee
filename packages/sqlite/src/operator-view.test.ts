/**
 * What the SQLite outbox keeps for operators beyond the conformance suite: prune runs in bounded batches
 * (separate transactions) over a large backlog, a `reason` filter pages after matching, attempts are kept
 * as core's `appendAttempt` keeps them, and stale heart-beats go with a prune.
 */
import { DatabaseSync } from 'node:sqlite';
import { type AttemptRecord, DAY_MS, JOB_STATES } from '@postback/core';
import { ATTEMPT_DETAIL_MAX_CHARS, attemptDetail } from '@postback/core/store';
import { afterEach, describe, expect, it } from 'vitest';
import { type TempDatabase, tempDatabase } from '../test/temp-files.ts';
import { PRUNE_BATCH_SIZE } from './operator-queries.ts';
import { createSqliteOutbox, type SqliteOutbox } from './outbox.ts';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
let temp: TempDatabase | undefined;
const opened: SqliteOutbox[] = [];

function open(thread = false): SqliteOutbox {
  temp ??= tempDatabase();
  const outbox = createSqliteOutbox({ filename: temp.filename, now: () => T0, thread });
  opened.push(outbox);
  return outbox;
}

afterEach(async () => {
  for (const outbox of opened.splice(0)) await outbox.close();
  temp?.cleanup();
  temp = undefined;
});

/** Inserts `count` refund jobs in `state` through a second connection (fast: one statement). */
function insertRefunds(
  filename: string,
  count: number,
  fields: { state: string; prefix: string; updatedAt: number; lastError?: (i: number) => string },
): void {
  const db = new DatabaseSync(filename);
  const insert = db.prepare(
    `INSERT INTO jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline, last_error)
     VALUES ('refund', ?, ?, 1, ?, ?, ?, ?, ?)`,
  );
  db.exec('BEGIN');
  for (let i = 0; i < count; i++) {
    const at = fields.updatedAt - count + i;
    insert.run(
      `${fields.prefix}${i}`,
      fields.state,
      at,
      fields.updatedAt,
      at,
      at,
      fields.lastError?.(i) ?? null,
    );
  }
  db.exec('COMMIT');
  db.close();
}

const attempt = (overrides: Partial<AttemptRecord> = {}): AttemptRecord => ({
  startedAt: T0,
  durationMs: 40,
  outcome: 'transient',
  status: 503,
  detail: '503',
  ...overrides,
});

describe('prune on the SQLite outbox', () => {
  it('deletes a large backlog in batches of separate transactions, keeping what the rule protects', async () => {
    const outbox = open();
    const pruned = 2 * PRUNE_BATCH_SIZE + 17;
    insertRefunds(outbox.filename, pruned, {
      state: 'delivered',
      prefix: 'ord_old',
      updatedAt: T0 - 10 * DAY_MS,
    });
    insertRefunds(outbox.filename, 30, { state: 'cancelled', prefix: 'ord_new', updatedAt: T0 - DAY_MS / 2 });
    insertRefunds(outbox.filename, 40, { state: 'dead', prefix: 'ord_dead', updatedAt: T0 - 10 * DAY_MS });
    const before = outbox.commits;
    expect(await outbox.prune({ now: T0, olderThanMs: DAY_MS, returnWindowMs: 0 })).toBe(pruned);
    // One window of a state per transaction: three for the delivered jobs, one each for the other states.
    expect(outbox.commits - before).toBeGreaterThanOrEqual(5);
    const left = (await outbox.stats(T0)).counts;
    expect(left).toMatchObject({ delivered: 0, cancelled: 30, dead: 40 });
    expect(await outbox.prune({ now: T0, olderThanMs: DAY_MS, returnWindowMs: 0 })).toBe(0);
  });

  it('lets other writes through between its batches (threaded writer)', async () => {
    const outbox = open(true);
    insertRefunds(outbox.filename, 3 * PRUNE_BATCH_SIZE, {
      state: 'expired',
      prefix: 'ord_x',
      updatedAt: T0 - 10 * DAY_MS,
    });
    const pruning = outbox.prune({ now: T0, olderThanMs: DAY_MS, returnWindowMs: 0 });
    const enqueued = outbox.confirm({
      orderId: 'ord_during',
      valueMicros: 1,
      click: { token: 'tok', clickedAt: T0 - 1_000 },
    });
    expect((await enqueued).created).toBe(true);
    expect(await pruning).toBe(3 * PRUNE_BATCH_SIZE);
    expect((await outbox.stats(T0)).counts).toMatchObject({ pending: 1, expired: 0 });
  });

  it('forgets the heart-beats of workers not seen within the retention', async () => {
    const outbox = open();
    const beat = {
      state: 'running',
      pausedUntil: null,
      pauseReason: null,
      version: '1',
      host: null,
      pid: 1,
      pausedAccounts: [],
    };
    await outbox.beat({ workerId: 'gone', at: T0 - 3 * DAY_MS, ...beat });
    await outbox.beat({ workerId: 'here', at: T0 - 1_000, ...beat });
    await outbox.prune({ now: T0, olderThanMs: DAY_MS, returnWindowMs: 0 });
    const seen = await outbox.workers({ now: T0, sinceMs: 30 * DAY_MS });
    expect(seen.map((w) => w.workerId)).toEqual(['here']);
  });
});

describe('listJobs on the SQLite outbox', () => {
  it('pages a reason filter after matching: offset and limit count only the jobs that match', async () => {
    const outbox = open();
    insertRefunds(outbox.filename, 30, {
      state: 'dead',
      prefix: 'ord_r',
      updatedAt: T0 - DAY_MS,
      lastError: (i) => (i % 3 === 0 ? `404: click_token not found (${i})` : '503: busy'),
    });
    const all = await outbox.listJobs({ reason: /click_token/ });
    expect(all.map((j) => j.orderId)).toEqual([0, 3, 6, 9, 12, 15, 18, 21, 24, 27].map((i) => `ord_r${i}`));
    const page = await outbox.listJobs({ reason: /click_token/g, offset: 2, limit: 3 });
    expect(page.map((j) => j.orderId)).toEqual(['ord_r6', 'ord_r9', 'ord_r12']);
    expect(await outbox.listJobs({ reason: /click_token/, offset: 10 })).toEqual([]);
  });

  it('says what it keeps: every feature, every state listable', () => {
    expect(open().features).toEqual({
      attemptHistory: true,
      listableStates: JOB_STATES,
      heartbeats: true,
      prune: true,
      fairClaims: true,
      holds: true,
      ledger: true,
    });
  });
});

describe('attempt history on the SQLite outbox', () => {
  it('keeps an attempt as core keeps it: detail cut with an ellipsis, control characters escaped, no other fields', async () => {
    const outbox = open();
    await outbox.confirm({
      orderId: 'ord_a',
      valueMicros: 1,
      click: { token: 'tok', clickedAt: T0 - 1_000 },
    });
    const [job] = await outbox.claim({ now: T0, limit: 1, leaseMs: 30_000 });
    if (job === undefined) throw new Error('nothing claimed');
    const long = `bad\u0007${'x'.repeat(2 * ATTEMPT_DETAIL_MAX_CHARS)}`;
    const extra = { ...attempt({ detail: long }), apiKey: 'sk_live_secret' } as AttemptRecord;
    await outbox.retry(job, { now: T0, nextAttemptAt: T0, error: '503', attempt: extra });
    const [kept] = await outbox.history(job.id);
    expect(kept?.detail).toHaveLength(ATTEMPT_DETAIL_MAX_CHARS);
    expect(kept?.detail).toBe(attemptDetail(long));
    expect(kept?.detail).not.toContain('\u0007');
    expect(kept?.detail?.endsWith('…')).toBe(true);
    expect(Object.keys(kept ?? {}).sort()).toEqual([
      'detail',
      'durationMs',
      'outcome',
      'startedAt',
      'status',
    ]);
  });

  it('refuses a malformed attempt before anything is written', async () => {
    const outbox = open();
    await outbox.confirm({
      orderId: 'ord_b',
      valueMicros: 1,
      click: { token: 'tok', clickedAt: T0 - 1_000 },
    });
    const [job] = await outbox.claim({ now: T0, limit: 1, leaseMs: 30_000 });
    if (job === undefined) throw new Error('nothing claimed');
    const bad = attempt({ status: 42 });
    await expect(outbox.retry(job, { now: T0, nextAttemptAt: T0, error: 'x', attempt: bad })).rejects.toThrow(
      /attempt.status/,
    );
    expect((await outbox.get(job.id))?.state).toBe('inflight');
    expect(await outbox.history(job.id)).toEqual([]);
  });

  it('is deleted with its job by purgeDead', async () => {
    const outbox = open();
    await outbox.confirm({
      orderId: 'ord_c',
      valueMicros: 1,
      click: { token: 'tok', clickedAt: T0 - 1_000 },
    });
    const [job] = await outbox.claim({ now: T0, limit: 1, leaseMs: 30_000 });
    if (job === undefined) throw new Error('nothing claimed');
    await outbox.fail(job, { now: T0, state: 'dead', reason: '404', attempt: attempt({ status: 404 }) });
    expect(await outbox.history(job.id)).toHaveLength(1);
    expect(await outbox.purgeDead({ ids: [job.id] })).toBe(1);
    expect(await outbox.history(job.id)).toEqual([]);
  });
});

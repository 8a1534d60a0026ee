import { DatabaseSync } from 'node:sqlite';
import { DAY_MS, DEFAULT_SAFETY_MARGIN_MS, type Job, OptionsError } from '@postback/core';
import { QUIET_WITHIN_MS } from '@postback/core/store';
import { afterEach, describe, expect, it } from 'vitest';
import { type TempDatabase, tempDatabase } from '../test/temp-files.ts';
import { MAX_ACCOUNTS_WALKED } from './fair-claim.ts';
import { createSqliteOutbox, type SqliteOutbox } from './outbox.ts';
import { SCHEMA_VERSION, SchemaVersionError } from './schema.ts';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
let t = T0;
const now = () => t;
const click = (token = 'tok_abc') => ({ token, clickedAt: t - 60_000 });
const LEASE = 30_000;

let temp: TempDatabase | undefined;
const opened: SqliteOutbox[] = [];

function open(extra: Partial<Parameters<typeof createSqliteOutbox>[0]> = {}): SqliteOutbox {
  temp ??= tempDatabase();
  const outbox = createSqliteOutbox({ filename: temp.filename, now, ...extra });
  opened.push(outbox);
  return outbox;
}

afterEach(async () => {
  for (const outbox of opened.splice(0)) await outbox.close();
  temp?.cleanup();
  temp = undefined;
  t = T0;
});

describe('the file', () => {
  it('is in WAL mode with synchronous=FULL by default, so a resolved enqueue is fsynced', () => {
    const outbox = open();
    expect(outbox.durability).toEqual({ journalMode: 'wal', synchronous: 'full', durableOnResolve: true });
    const raw = new DatabaseSync(outbox.filename);
    expect(raw.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    expect(raw.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
    raw.close();
  });

  it('applies synchronous=normal when asked (faster commits, last ones lost on power cut)', () => {
    expect(open({ synchronous: 'normal' }).durability).toMatchObject({
      synchronous: 'normal',
      durableOnResolve: false,
    });
  });

  it('keeps every resolved enqueue across close and reopen', async () => {
    const first = open();
    await Promise.all(
      [1, 2, 3].map((i) => first.confirm({ orderId: `ord_${i}`, valueMicros: i, click: click() })),
    );
    await first.close();
    const second = open();
    expect((await second.stats(t)).counts.pending).toBe(3);
    expect((await second.getByOrder('ord_2'))[0]).toMatchObject({
      kind: 'confirm',
      valueMicros: 2,
      state: 'pending',
    });
  });

  it('refuses a file written by a newer schema version instead of guessing', async () => {
    temp = tempDatabase();
    const db = new DatabaseSync(temp.filename);
    // Our tables as a newer version might leave them: the columns that make them ours, a higher version.
    db.exec(
      'CREATE TABLE jobs (id INTEGER PRIMARY KEY, kind TEXT, order_id TEXT, state TEXT, next_attempt_at INTEGER, ' +
        `lease_token TEXT, click_token TEXT, shiny_new_column TEXT); PRAGMA user_version = ${SCHEMA_VERSION + 1}`,
    );
    db.close();
    expect(() => createSqliteOutbox({ filename: (temp as TempDatabase).filename })).toThrow(
      SchemaVersionError,
    );
  });

  it('lets an outbox and a second connection migrate the same fresh file without conflict', async () => {
    const a = open();
    const b = open();
    await a.confirm({ orderId: 'ord_shared', valueMicros: 1, click: click() });
    expect(await b.getByOrder('ord_shared')).toHaveLength(1);
  });
});

describe('options', () => {
  it('rejects an unknown option, naming it', () => {
    temp = tempDatabase();
    const options = { filename: temp.filename, synchronus: 'off' } as unknown as Parameters<
      typeof createSqliteOutbox
    >[0];
    expect(() => createSqliteOutbox(options)).toThrow(OptionsError);
    expect(() => createSqliteOutbox(options)).toThrow(/synchronus/);
  });

  it('rejects synchronous=off, which could corrupt the file on power loss', () => {
    temp = tempDatabase();
    const options = { filename: temp.filename, synchronous: 'off' } as unknown as Parameters<
      typeof createSqliteOutbox
    >[0];
    expect(() => createSqliteOutbox(options)).toThrow(expect.objectContaining({ field: 'synchronous' }));
  });

  it('rejects a safety margin not shorter than the window, naming policy', () => {
    temp = tempDatabase();
    expect(() =>
      createSqliteOutbox({
        filename: temp!.filename,
        policy: { confirmWindowMs: 1000, safetyMarginMs: 1000 },
      }),
    ).toThrow(expect.objectContaining({ field: 'policy' }));
  });

  it('stamps confirm deadlines with the configured policy', async () => {
    const outbox = open({ policy: { confirmWindowMs: 2 * DAY_MS, safetyMarginMs: 60_000 } });
    const { job } = await outbox.confirm({ orderId: 'ord_policy', valueMicros: 1, click: click() });
    expect(job.deadline).toBe(job.clickedAt + 2 * DAY_MS - 60_000);
  });
});

describe('claims and leases', () => {
  it('claims due jobs oldest first, at most limit, never a job not yet due, counting an attempt', async () => {
    const outbox = open();
    for (const i of [1, 2, 3]) {
      await outbox.confirm({ orderId: `ord_${i}`, valueMicros: i, click: click() });
      t += 1000;
    }
    const [first] = await outbox.claim({ now: t, limit: 1, leaseMs: LEASE });
    const [retried] = await outbox.claim({ now: t, limit: 1, leaseMs: LEASE });
    // Push ord_2 into the future: only ord_3 is due now.
    await outbox.retry(retried as Job, { now: t, nextAttemptAt: t + 60_000, error: 'HTTP 503' });
    const rest = await outbox.claim({ now: t, limit: 10, leaseMs: LEASE });
    expect(first?.orderId).toBe('ord_1');
    expect(first).toMatchObject({ state: 'inflight', attempts: 1, lease: { expiresAt: t + LEASE } });
    expect(rest.map((j) => j.orderId)).toEqual(['ord_3']);
    expect((await outbox.get(retried!.id))?.attempts).toBe(1);
  });
});

describe('a refund never overtakes its confirmation', () => {
  it('is not reclaimed after its lease ran out while a confirm of its order has been enqueued since', async () => {
    const outbox = open();
    // A reversal given its campaign (its confirmation went out elsewhere) is claimable at once …
    await outbox.refund({ orderId: 'ord_late_confirm', campaignId: 'cmp_5' });
    const [refund] = await outbox.claim({ now: t, limit: 10, leaseMs: LEASE });
    expect(refund?.kind).toBe('refund');
    // … then a confirm of the same order arrives, and the refund's worker dies.
    await outbox.confirm({ orderId: 'ord_late_confirm', valueMicros: 1, click: click() });
    t += LEASE;
    const next = await outbox.claim({ now: t, limit: 10, leaseMs: LEASE });
    expect(next.map((j) => j.kind)).toEqual(['confirm']);
  });

  it('cancels a confirmation that was not sent yet instead of enqueueing a reversal', async () => {
    const outbox = open();
    await outbox.confirm({ orderId: 'ord_unsent', valueMicros: 10, click: click() });
    const result = await outbox.refund({ orderId: 'ord_unsent' });
    expect(result).toMatchObject({ outcome: 'cancelled', job: { kind: 'confirm', state: 'cancelled' } });
    expect(await outbox.claim({ now: t, limit: 10, leaseMs: LEASE })).toEqual([]);
    expect(await outbox.refund({ orderId: 'ord_unsent' })).toMatchObject({ outcome: 'not-charged' });
  });
});

describe('operators', () => {
  async function makeDead(outbox: SqliteOutbox, orderId: string, clickedAt = t - 60_000): Promise<Job> {
    await outbox.confirm({ orderId, valueMicros: 1, click: { token: 'tok_d', clickedAt } });
    const [job] = await outbox.claim({ now: t, limit: 1, leaseMs: LEASE });
    await outbox.fail(job as Job, { now: t, state: 'dead', reason: `HTTP 422: bad order ${orderId}` });
    return job as Job;
  }

  it('pages through dead jobs with their reasons by cursor', async () => {
    const outbox = open();
    for (let i = 0; i < 5; i++) await makeDead(outbox, `ord_dead_${i}`);
    const first = await outbox.listDead({ limit: 2 });
    const second = await outbox.listDead({ limit: 2, after: first[1]!.id });
    const third = await outbox.listDead({ limit: 2, after: second[1]!.id });
    expect([...first, ...second, ...third].map((j) => j.orderId)).toEqual(
      [0, 1, 2, 3, 4].map((i) => `ord_dead_${i}`),
    );
    expect(first[0]?.lastError).toBe('HTTP 422: bad order ord_dead_0');
  });
});

describe('fair claims across accounts', () => {
  const enqueue = (outbox: SqliteOutbox, orderId: string, account: string | null) =>
    outbox.confirm({ orderId, account, valueMicros: 1, click: click() });
  const claim = (outbox: SqliteOutbox, limit: number, extra: { excludeAccounts?: (string | null)[] } = {}) =>
    outbox.claim({ now: t, limit, leaseMs: LEASE, ...extra });
  const accountsOf = (jobs: readonly Job[]) => jobs.map((job) => job.account);

  it('a backlog in one account takes one turn per round; the cursor goes on after the last account served', async () => {
    const outbox = open({ thread: false });
    // A backlog of 2,000 jobs in one account, enqueued first; then four accounts (and no account) with three each.
    await Promise.all(Array.from({ length: 2_000 }, (_, i) => enqueue(outbox, `big_${i}`, 'big')));
    t += 1_000;
    for (const account of [null, 'a', 'b', 'c']) {
      for (let i = 0; i < 3; i++) await enqueue(outbox, `o_${i}`, account);
    }
    // Past the quiet window: no account is quiet, every job takes its turn.
    t += QUIET_WITHIN_MS;
    // Turns in key order ('' — no account — first), one job each, continuing where the last claim stopped.
    expect(accountsOf(await claim(outbox, 3))).toEqual([null, 'a', 'b']);
    expect(accountsOf(await claim(outbox, 3))).toEqual(['big', 'c', null]);
    // A second turn once every account had one; within an account, due order (the oldest first).
    const third = await claim(outbox, 7);
    expect(third.map((job) => `${job.account}:${job.orderId}`)).toEqual([
      'a:o_1',
      'b:o_1',
      'big:big_1',
      'c:o_1',
      'null:o_2',
      'a:o_2',
      'b:o_2',
    ]);
    // Only c and the backlog are left; with the backlog's account excluded, c alone.
    expect(accountsOf(await claim(outbox, 4, { excludeAccounts: ['big'] }))).toEqual(['c']);
    expect(accountsOf(await claim(outbox, 3))).toEqual(['big', 'big', 'big']);
  });

  it('urgent jobs (deadline within urgentWithinMs) go first, nearest first; excluded accounts are never claimed', async () => {
    const outbox = open({ thread: false });
    for (let i = 0; i < 5; i++) await enqueue(outbox, `big_${i}`, 'big');
    // Deadline = click + 7 days − 2 h margin: clicked long ago, the deadline is near.
    const late = (orderId: string, account: string, minutesLeft: number) =>
      outbox.confirm({
        orderId,
        account,
        valueMicros: 1,
        click: {
          token: 'tok_late',
          clickedAt: t - 7 * DAY_MS + DEFAULT_SAFETY_MARGIN_MS + minutesLeft * 60_000,
        },
      });
    await late('late_40', 'x', 40);
    await late('late_10', 'y', 10);
    await late('late_20', 'paused', 20);
    t += QUIET_WITHIN_MS; // no account is quiet: the urgent tier, then the turns
    const claimed = await claim(outbox, 3, { excludeAccounts: ['paused'] });
    expect(claimed.map((job) => job.orderId)).toEqual(['late_10', 'late_40', 'big_0']);
    // With a narrower urgency window, a 20-minute deadline is not urgent: it takes its turn.
    const rest = await outbox.claim({ now: t, limit: 10, leaseMs: LEASE, urgentWithinMs: 60_000 });
    // The turns go on after 'big' (served last): 'paused', no longer excluded, then 'big' again.
    expect(rest.map((job) => job.orderId)).toEqual(['late_20', 'big_1', 'big_2', 'big_3', 'big_4']);
  });

  it("a quiet account's first job goes before the turns, its next takes its turn; the cursor stays", async () => {
    const outbox = open({ thread: false });
    for (const account of ['b', 'c', 'd']) {
      for (let i = 0; i < 2; i++) await enqueue(outbox, `o_${i}`, account);
    }
    t += QUIET_WITHIN_MS;
    expect(accountsOf(await claim(outbox, 1))).toEqual(['b']);
    // 'a' (two fresh jobs) and 'z' (one) are quiet: their first jobs go first, oldest first. 'a' then
    // takes its turn with its second job (its first is not taken twice); 'z', with none left, has no turn.
    await enqueue(outbox, 'o_0', 'z');
    await enqueue(outbox, 'o_0', 'a');
    await enqueue(outbox, 'o_1', 'a');
    const claimed = await claim(outbox, 5);
    expect(claimed.map((job) => `${job.account}:${job.orderId}`)).toEqual([
      'z:o_0',
      'a:o_0',
      'c:o_0',
      'd:o_0',
      'a:o_1',
    ]);
    // The quiet tier did not move the cursor: the turns went on after 'b', and now after 'a'.
    expect(accountsOf(await claim(outbox, 2))).toEqual(['b', 'c']);
  });

  it('refuses malformed claim options before anything is written', async () => {
    const outbox = open({ thread: false });
    const base = { now: t, limit: 1, leaseMs: LEASE };
    await expect(outbox.claim({ ...base, urgentWithinMs: -1 })).rejects.toThrow(RangeError);
    await expect(outbox.claim({ ...base, excludeAccounts: 'shop' as unknown as string[] })).rejects.toThrow(
      TypeError,
    );
    await expect(outbox.claim({ ...base, excludeAccounts: [42 as unknown as string] })).rejects.toThrow(
      TypeError,
    );
  });

  it('keeps paused accounts of a heart-beat', async () => {
    const outbox = open({ thread: false });
    const pause = { account: 'shop-9', since: t - 1_000, until: t + 60_000, reason: 'HTTP 401', status: 401 };
    const beat = {
      workerId: 'w1',
      at: t,
      state: 'running',
      pausedUntil: null,
      pauseReason: null,
      version: '1',
      host: null,
      pid: 1,
    };
    await outbox.beat({ ...beat, pausedAccounts: [pause, { ...pause, account: null, status: null }] });
    await outbox.beat({ ...beat, workerId: 'w2', pausedAccounts: [] });
    const workers = await outbox.workers({ now: t, sinceMs: 60_000 });
    expect(Object.fromEntries(workers.map((w) => [w.workerId, w.pausedAccounts]))).toEqual({
      w1: [pause, { ...pause, account: null, status: null }],
      w2: [],
    });
    await expect(
      outbox.beat({ ...beat, pausedAccounts: [{ ...pause, since: 'x' }] } as never),
    ).rejects.toThrow(RangeError);
  });
});

describe('fair claims with many accounts and nothing due', () => {
  it('a claim walks a bounded number of accounts; the next one goes on after them, so every account is reached', async () => {
    const outbox = open({ thread: false });
    const accounts = Array.from(
      { length: 2 * MAX_ACCOUNTS_WALKED + 10 },
      (_, i) => `a${String(i).padStart(4, '0')}`,
    );
    await Promise.all(
      accounts.map((account) => outbox.confirm({ orderId: 'o', account, valueMicros: 1, click: click() })),
    );
    // Every job waits for a retry an hour from now: the accounts have claimable jobs, none due.
    const claimed = await outbox.claim({ now: t, limit: accounts.length, leaseMs: LEASE });
    expect(claimed).toHaveLength(accounts.length);
    for (const job of claimed) {
      await outbox.retry(job, { now: t, nextAttemptAt: t + 3_600_000, error: '503' });
    }
    // The turns go on after the last account served (a0521) and wrap around; the one due job is in an
    // account 301 accounts further on: the first claim walks 256 of them and stops, the next one finds it.
    // Claimed once that job has waited past the quiet window (else it would go first as a quiet account's).
    await outbox.confirm({ orderId: 'o', account: 'a0300x', valueMicros: 1, click: click() });
    const later = t + QUIET_WITHIN_MS + 1;
    expect(await outbox.claim({ now: later, limit: 1, leaseMs: LEASE })).toEqual([]);
    const [found] = await outbox.claim({ now: later, limit: 1, leaseMs: LEASE });
    expect(found?.account).toBe('a0300x');
  });
});

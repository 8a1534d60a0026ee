/**
 * Durable enqueue throughput of the SQLite outbox (group commit, `synchronous=FULL`, 64 concurrent
 * callers), measured side by side in one run against:
 *
 * 1. one transaction per job on the same kind of file (what an outbox without group commit pays: one
 *    fsync per enqueue) — target: ours ≥ 10×;
 * 2. a raw batched INSERT of the same rows, in transactions of the same size as our batches (64 rows,
 *    one per concurrent caller): the limit of group commit, with none of our validation, promises or
 *    idempotency checks — target: ours ≥ 0.5× of it;
 * 3. (informational) the same outbox with `thread: false`: its writes on the calling thread, what the
 *    writer thread costs a stream of enqueues (two message hops per batch);
 * 4. BullMQ `Queue.add()` with 64 in flight on the local Redis with `appendonly yes` and
 *    `appendfsync always` (durable per write, like ours), set with CONFIG SET for the run and restored
 *    afterwards, on a unique queue obliterated at the end — target: ours ahead.
 *
 * The machine is shared, so the variants run interleaved in many short slices (one slice of each per
 * round) and each rate is total jobs over total time: a burst of load elsewhere hits all of them alike.
 * Bounded in count (ROUNDS × slice) and time (MAX_MS); files live in a temp directory removed at the end.
 *
 * Run: node --conditions=@postback/source bench/enqueue.ts
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { createSqliteOutbox, type SqliteOutbox } from '@postback/sqlite';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

const CALLERS = 64;
const ROUNDS = 20;
/** Jobs per slice of the batched variants; the one-transaction-per-job slice is a tenth of it. */
const SLICE = 3_200;
/** Stop starting rounds after this long. */
const MAX_MS = 45_000;
const REDIS = { host: '127.0.0.1', port: 6379 };

const dir = mkdtempSync(join(tmpdir(), 'postback-bench-enqueue-'));
const clickedAt = Date.now() - 60_000;
const DEADLINE = clickedAt + 7 * 86_400_000 - 3_600_000;
const input = (i: number) => ({
  orderId: `ord_${i}`,
  valueMicros: 1_000_000 + i,
  click: { token: `tok_${i.toString(36)}`, clickedAt },
});

/** Accumulated jobs and time of one variant over all its slices. */
class Meter {
  jobs = 0;
  ms = 0;
  get perSecond(): number {
    return (this.jobs / this.ms) * 1000;
  }
}

/** 64 callers, each awaiting its previous enqueue before starting the next, until `count` jobs are done. */
async function slice(meter: Meter, count: number, enqueue: (i: number) => Promise<unknown>): Promise<void> {
  const first = meter.jobs;
  let next = first;
  const end = first + count;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (next < end) await enqueue(next++);
    }),
  );
  meter.ms += performance.now() - start;
  meter.jobs = end;
}

/** A file with our schema, opened raw with the same pragmas as the outbox (WAL, synchronous=FULL). */
async function rawFile(name: string): Promise<{ db: DatabaseSync; insert: StatementSync }> {
  const filename = join(dir, name);
  await createSqliteOutbox({ filename }).close();
  const db = new DatabaseSync(filename);
  db.exec('PRAGMA synchronous = FULL');
  const insert = db.prepare(
    'INSERT INTO jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline, click_token, value_micros, clicked_at) ' +
      "VALUES ('confirm', ?, 'pending', 0, ?, ?, ?, ?, ?, ?, ?)",
  );
  return { db, insert };
}

function insertRow(insert: StatementSync, i: number): void {
  const job = input(i);
  const now = Date.now();
  insert.run(job.orderId, now, now, now, DEADLINE, job.click.token, job.valueMicros, clickedAt);
}

/** Turns on AOF with fsync at every write; returns how to put the previous settings back. */
async function durableRedis(admin: Redis): Promise<() => Promise<void>> {
  const [, appendonly] = (await admin.config('GET', 'appendonly')) as [string, string];
  const [, appendfsync] = (await admin.config('GET', 'appendfsync')) as [string, string];
  const restore = async () => {
    await admin.config('SET', 'appendfsync', appendfsync);
    await admin.config('SET', 'appendonly', appendonly);
  };
  await admin.config('SET', 'appendonly', 'yes');
  await admin.config('SET', 'appendfsync', 'always');
  // Turning AOF on starts a rewrite; measure only once it is done (bounded wait).
  for (let waited = 0; waited < 10_000; waited += 100) {
    const info = await admin.info('persistence');
    if (/aof_enabled:1/.test(info) && /aof_rewrite_in_progress:0/.test(info)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return restore;
}

const fmt = (m: Meter) =>
  `${Math.round(m.perSecond).toLocaleString('en-US').padStart(9)} jobs/s  (${m.jobs} jobs in ${Math.round(m.ms)} ms)`;
const ratio = (a: Meter, b: Meter) => `${(a.perSecond / b.perSecond).toFixed(2)}x`;

const meters = {
  ours: new Meter(),
  local: new Meter(),
  perJob: new Meter(),
  raw: new Meter(),
  bull: new Meter(),
};
let outbox: SqliteOutbox | undefined;
/** The same outbox with its writes on the calling thread (informational: what the writer thread costs). */
let localOutbox: SqliteOutbox | undefined;
let perJob: Awaited<ReturnType<typeof rawFile>> | undefined;
let raw: Awaited<ReturnType<typeof rawFile>> | undefined;
let admin: Redis | undefined;
let restoreRedis: (() => Promise<void>) | undefined;
let queue: Queue | undefined;
let bullSkipped: string | null = null;

try {
  outbox = createSqliteOutbox({ filename: join(dir, 'ours.db'), synchronous: 'full' });
  if (outbox.durability.synchronous !== 'full' || outbox.durability.journalMode !== 'wal')
    throw new Error('not durable');
  localOutbox = createSqliteOutbox({ filename: join(dir, 'local.db'), synchronous: 'full', thread: false });
  perJob = await rawFile('per-job.db');
  raw = await rawFile('raw.db');

  admin = new Redis({ ...REDIS, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  try {
    await admin.connect();
    restoreRedis = await durableRedis(admin);
    queue = new Queue(`postback-bench-enqueue-${process.pid}-${Date.now()}`, { connection: REDIS });
    await queue.waitUntilReady();
  } catch (error) {
    bullSkipped = `Redis not reachable at ${REDIS.host}:${REDIS.port} (${(error as Error).message})`;
  }

  // Warm-up (JIT, file growth) on order ids the measured slices never use.
  const warm = new Meter();
  warm.jobs = 10_000_000;
  await slice(warm, 2_000, (i) => (outbox as SqliteOutbox).confirm(input(i)));
  await slice(warm, 2_000, (i) => (localOutbox as SqliteOutbox).confirm(input(i)));
  if (queue !== undefined)
    await slice(warm, 2_000, (i) => (queue as Queue).add('confirm', input(i), { jobId: `ord_${i}` }));

  const started = performance.now();
  let rounds = 0;
  for (; rounds < ROUNDS && performance.now() - started < MAX_MS; rounds++) {
    const commitsBefore = outbox.commits;
    await slice(meters.ours, SLICE, (i) => (outbox as SqliteOutbox).confirm(input(i)));
    if (rounds === 0)
      console.log(`  (ours: ${(SLICE / (outbox.commits - commitsBefore)).toFixed(1)} jobs per commit)`);
    await slice(meters.local, SLICE, (i) => (localOutbox as SqliteOutbox).confirm(input(i)));
    const { db: perJobDb, insert: perJobInsert } = perJob;
    // 64 callers, but each enqueue is its own BEGIN … COMMIT: commits (and fsyncs) happen one by one.
    await slice(meters.perJob, SLICE / 10, async (i) => {
      perJobDb.exec('BEGIN IMMEDIATE');
      insertRow(perJobInsert, i);
      perJobDb.exec('COMMIT');
    });
    const start = performance.now();
    for (let i = meters.raw.jobs, end = i + SLICE; i < end; ) {
      raw.db.exec('BEGIN IMMEDIATE');
      for (const batchEnd = Math.min(end, i + CALLERS); i < batchEnd; i++) insertRow(raw.insert, i);
      raw.db.exec('COMMIT');
    }
    meters.raw.ms += performance.now() - start;
    meters.raw.jobs += SLICE;
    if (queue !== undefined) {
      // jobId = orderId: idempotent per order, as our enqueue is.
      await slice(meters.bull, SLICE, (i) =>
        (queue as Queue).add('confirm', input(i), { jobId: input(i).orderId }),
      );
    }
  }

  const stored = (await outbox.stats(Date.now())).counts.pending;
  if (stored !== meters.ours.jobs + 2_000) throw new Error(`only ${stored} jobs stored`);

  console.log(
    `durable enqueue, synchronous=FULL, ${CALLERS} concurrent callers, ${rounds} interleaved rounds`,
  );
  console.log(`  ours (group commit)            ${fmt(meters.ours)}`);
  console.log(`  ours, writes on calling thread ${fmt(meters.local)}`);
  console.log(`  one transaction per job        ${fmt(meters.perJob)}`);
  console.log(`  raw batched INSERT (${CALLERS} per tx)  ${fmt(meters.raw)}`);
  if (bullSkipped !== null) console.log(`  BullMQ add(): skipped — ${bullSkipped}`);
  else console.log(`  BullMQ add(), AOF always       ${fmt(meters.bull)}`);
  console.log('ratios');
  console.log(`  ours / one transaction per job: ${ratio(meters.ours, meters.perJob)}   (target >= 10x)`);
  console.log(`  ours / raw batched INSERT:      ${ratio(meters.ours, meters.raw)}   (target >= 0.5x)`);
  if (bullSkipped === null)
    console.log(`  ours / BullMQ add():            ${ratio(meters.ours, meters.bull)}   (target > 1x)`);
  console.log(
    `  (informational) ours with thread: false / raw batched INSERT: ${ratio(meters.local, meters.raw)}; ours / ours with thread: false: ${ratio(meters.ours, meters.local)}`,
  );
} finally {
  await outbox?.close();
  await localOutbox?.close();
  perJob?.db.close();
  raw?.db.close();
  if (queue !== undefined) {
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
  }
  await restoreRedis?.();
  admin?.disconnect();
  rmSync(dir, { recursive: true, force: true });
}

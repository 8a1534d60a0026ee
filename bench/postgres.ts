/**
 * The Postgres outbox against pg-boss on the same server, measured side by side in one run:
 *
 * 1. Enqueue: ours = `outbox.confirm(tx, ...)` inside a BEGIN/COMMIT of the caller (the transactional
 *    outbox), 50 in flight; pg-boss = `send()` with 50 in flight (its own autocommit), and, for the
 *    exact same work, `send(..., { db })` inside the same kind of transaction. Target: ours ahead.
 * 2. Claim + complete with a no-op handler, 4 concurrent consumers, batches of 10: ours = `claim` then
 *    `complete` per job (what the Dispatcher does: each job has its own outcome); pg-boss = `fetch` then
 *    `complete(name, id)` per job (the same work), and `complete(name, ids)` once per batch (what its
 *    `work()` does, its best case). Target: ours ahead of the same work.
 * 3. Delivery through the Dispatcher to a local sandbox of the ad service: 4 worker outboxes (own pools,
 *    own Dispatchers) vs 1 on one queue. Target ≥ 1.6×.
 *
 * The machine is shared, so variants run interleaved in short slices and each rate is total jobs over
 * total time. Bounded in count (ROUNDS × SLICE) and time (MAX_MS per part). Every variant gets a fresh
 * schema, dropped at the end. Pools are capped at 10 connections (the server's limit is shared).
 *
 * Run: node --conditions=@postback/source bench/postgres.ts
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createPostgresOutbox, migrate, type PostgresOutbox } from '@postback/postgres';
import { startSandboxWorld } from '@postback/sandbox/testing';
import pg from 'pg';
import PgBoss from 'pg-boss';

const URL_ = process.env.POSTBACK_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const IN_FLIGHT = 50;
const POOL_MAX = 10;
const ROUNDS = 4;
const SLICE = 1_000;
const MAX_MS = 20_000;
const CONSUMERS = 4;
const BATCH = 10;
const QUEUE = 'postback_bench';

const tag = randomBytes(4).toString('hex');
const admin = new pg.Pool({ connectionString: URL_, max: 2 });
const schemas: string[] = [];
const clickedAt = Date.now() - 60_000;
const click = (i: number) => ({ token: `tok_${i.toString(36)}_bench`, clickedAt });

async function ourOutbox(name: string): Promise<{ outbox: PostgresOutbox; pool: pg.Pool; schema: string }> {
  const schema = `pbbench_${name}_${tag}`;
  schemas.push(schema);
  const pool = new pg.Pool({ connectionString: URL_, max: POOL_MAX });
  await migrate(pool, { schema });
  return { outbox: createPostgresOutbox({ pool, schema }), pool, schema };
}

async function startBoss(name: string): Promise<PgBoss> {
  const schema = `pbbench_${name}_${tag}`;
  schemas.push(schema);
  const boss = new PgBoss({
    connectionString: URL_,
    schema,
    max: POOL_MAX,
    supervise: false,
    schedule: false,
  });
  boss.on('error', () => {});
  await boss.start();
  await boss.createQueue(QUEUE);
  return boss;
}

/** Runs `count` tasks with at most `width` in flight. */
async function inFlight(count: number, width: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

async function inTx(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<unknown>): Promise<void> {
  const tx = await pool.connect();
  try {
    await tx.query('BEGIN');
    await work(tx);
    await tx.query('COMMIT');
  } catch (err) {
    await tx.query('ROLLBACK');
    throw err;
  } finally {
    tx.release();
  }
}

/** Interleaves slices of each variant; returns jobs per second of each. */
async function interleave(
  variants: Record<string, (round: number) => Promise<number>>,
): Promise<Record<string, number>> {
  const totals = Object.fromEntries(Object.keys(variants).map((k) => [k, { jobs: 0, ms: 0 }]));
  const started = Date.now();
  for (let round = 0; round < ROUNDS && Date.now() - started < MAX_MS; round += 1) {
    for (const [name, run] of Object.entries(variants)) {
      const t0 = performance.now();
      const jobs = await run(round);
      const total = totals[name]!;
      total.ms += performance.now() - t0;
      total.jobs += jobs;
    }
  }
  return Object.fromEntries(Object.entries(totals).map(([k, t]) => [k, (t.jobs / t.ms) * 1000]));
}

const fmt = (n: number) => `${Math.round(n).toLocaleString('en-US')}/s`;

async function benchEnqueue(): Promise<void> {
  const ours = await ourOutbox('enq');
  const boss = await startBoss('enq_boss');
  const bossTx = await startBoss('enq_bosstx');
  const bossTxPool = new pg.Pool({ connectionString: URL_, max: POOL_MAX });
  try {
    const rates = await interleave({
      ours: async (round) => {
        await inFlight(SLICE, IN_FLIGHT, (i) =>
          inTx(ours.pool, (tx) =>
            ours.outbox.confirm(tx, {
              orderId: `ord_${round}_${i}`,
              valueMicros: 1_000 + i,
              click: click(i),
            }),
          ),
        );
        return SLICE;
      },
      pgBossSend: async (round) => {
        await inFlight(SLICE, IN_FLIGHT, (i) =>
          boss.send(QUEUE, { orderId: `ord_${round}_${i}`, valueMicros: 1_000 + i, click: click(i) }),
        );
        return SLICE;
      },
      pgBossSendInTx: async (round) => {
        await inFlight(SLICE, IN_FLIGHT, (i) =>
          inTx(bossTxPool, (tx) =>
            bossTx.send(
              QUEUE,
              { orderId: `ord_${round}_${i}`, valueMicros: 1_000 + i, click: click(i) },
              {
                db: { executeSql: (text, values) => tx.query(text, values) },
              },
            ),
          ),
        );
        return SLICE;
      },
    });
    console.log('enqueue, 50 in flight:');
    console.log(`  ours confirm(tx) in a transaction   ${fmt(rates.ours!)}`);
    console.log(
      `  pg-boss send()                      ${fmt(rates.pgBossSend!)}   ratio ours/pg-boss ${(rates.ours! / rates.pgBossSend!).toFixed(2)}x`,
    );
    console.log(
      `  pg-boss send({ db }) in a transaction ${fmt(rates.pgBossSendInTx!)}   ratio ${(rates.ours! / rates.pgBossSendInTx!).toFixed(2)}x`,
    );
  } finally {
    await ours.outbox.close();
    await ours.pool.end();
    await boss.stop({ graceful: false, wait: true });
    await bossTx.stop({ graceful: false, wait: true });
    await bossTxPool.end();
  }
}

async function benchClaimComplete(): Promise<void> {
  const ours = await ourOutbox('claim');
  const bossEach = await startBoss('claim_each');
  const bossBatch = await startBoss('claim_batch');
  const prefillOurs = (n: number, round: number) =>
    ours.pool.query(
      `INSERT INTO "${ours.schema}".jobs (kind, order_id, state, created_at, updated_at, next_attempt_at, deadline, click_token, value_micros, clicked_at)
       SELECT 'confirm', 'ord_' || $2::int || '_' || g, 'pending', $3::bigint, $3::bigint, $3::bigint, $4::bigint, 'tok_bench', 1000, $5::bigint
       FROM generate_series(1, $1::int) AS g`,
      [n, round, Date.now() - 1000, clickedAt + 7 * 86_400_000, clickedAt],
    );
  const prefillBoss = (boss: PgBoss, n: number) =>
    boss.insert(
      Array.from({ length: n }, (_, i) => ({
        name: QUEUE,
        data: { orderId: `ord_${i}`, valueMicros: 1000, click: click(i) },
      })),
    );
  try {
    const consume = async (take: () => Promise<number>) => {
      let total = 0;
      await Promise.all(
        Array.from({ length: CONSUMERS }, async () => {
          for (;;) {
            const n = await take();
            if (n === 0) return;
            total += n;
          }
        }),
      );
      return total;
    };
    const rates = await interleave({
      ours: async (round) => {
        await prefillOurs(SLICE, round);
        return consume(async () => {
          const jobs = await ours.outbox.claim({ now: Date.now(), limit: BATCH, leaseMs: 60_000 });
          await Promise.all(
            jobs.map((job) => ours.outbox.complete(job, { now: Date.now(), campaignId: 'cmp_bench' })),
          );
          return jobs.length;
        });
      },
      pgBossEach: async () => {
        await prefillBoss(bossEach, SLICE);
        return consume(async () => {
          const jobs = await bossEach.fetch(QUEUE, { batchSize: BATCH });
          await Promise.all(jobs.map((job) => bossEach.complete(QUEUE, job.id)));
          return jobs.length;
        });
      },
      pgBossBatch: async () => {
        await prefillBoss(bossBatch, SLICE);
        return consume(async () => {
          const jobs = await bossBatch.fetch(QUEUE, { batchSize: BATCH });
          if (jobs.length > 0)
            await bossBatch.complete(
              QUEUE,
              jobs.map((job) => job.id),
            );
          return jobs.length;
        });
      },
    });
    console.log(
      `claim + complete (no-op handler), ${CONSUMERS} consumers, batches of ${BATCH} (prefill included in every variant's time):`,
    );
    console.log(`  ours claim + complete per job        ${fmt(rates.ours!)}`);
    console.log(
      `  pg-boss fetch + complete per job     ${fmt(rates.pgBossEach!)}   ratio ours/pg-boss ${(rates.ours! / rates.pgBossEach!).toFixed(2)}x`,
    );
    console.log(
      `  pg-boss fetch + complete per batch   ${fmt(rates.pgBossBatch!)}   ratio ${(rates.ours! / rates.pgBossBatch!).toFixed(2)}x`,
    );
  } finally {
    await ours.outbox.close();
    await ours.pool.end();
    await bossEach.stop({ graceful: false, wait: true });
    await bossBatch.stop({ graceful: false, wait: true });
  }
}
const WORKER_SCRIPT = fileURLToPath(new URL('../packages/postgres/test/fixtures/worker.ts', import.meta.url));
const DELIVERY_JOBS = 600;
/** Sends in flight per worker process, and the service's simulated network latency. */
const WORKER_CONCURRENCY = 8;
const SERVICE_LATENCY_MS = 25;

async function benchDelivery(): Promise<void> {
  const world = await startSandboxWorld();
  const children: ChildProcess[] = [];
  try {
    // A real service is tens of milliseconds away: without latency the in-process sandbox, not the
    // queue, would be what is measured on a 2-core machine.
    await world.setFaults({ latency_ms: SERVICE_LATENCY_MS });
    const seconds: Record<string, number[]> = { one: [], four: [] };
    for (const [round, workers] of [1, 4, 1, 4].entries()) {
      const ours = await ourOutbox(`deliv${round}`);
      const clicks = await world.clicks(DELIVERY_JOBS);
      const procs = Array.from({ length: workers }, () => {
        const child = spawn(
          process.execPath,
          ['--conditions=@postback/source', WORKER_SCRIPT, URL_, ours.schema, world.url],
          {
            env: {
              PATH: process.env.PATH ?? '',
              POSTBACK_API_KEY: world.conversionsKey,
              WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
            },
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        );
        children.push(child);
        return child;
      });
      await Promise.all(
        procs.map(
          (child) =>
            new Promise<void>((resolve) =>
              child.stdout?.setEncoding('utf8').on('data', (s: string) => s.includes('ready') && resolve()),
            ),
        ),
      );
      // Workers are idle and listening; one shop transaction enqueues everything and wakes them at commit.
      await inTx(ours.pool, async (tx) => {
        for (const [i, click] of clicks.entries())
          await ours.outbox.confirm(tx, { orderId: `dl_${round}_${i}`, valueMicros: 1_000, click });
      });
      const t0 = performance.now();
      const limit = Date.now() + 30_000;
      while ((await ours.outbox.stats(Date.now())).counts.delivered < DELIVERY_JOBS && Date.now() < limit)
        await new Promise((r) => setTimeout(r, 20));
      const elapsed = (performance.now() - t0) / 1000;
      const delivered = (await ours.outbox.stats(Date.now())).counts.delivered;
      if (delivered < DELIVERY_JOBS)
        throw new Error(`delivery run ${round} stalled at ${delivered}/${DELIVERY_JOBS}`);
      (workers === 1 ? seconds.one! : seconds.four!).push(elapsed);
      await Promise.all(
        procs.map(
          (child) =>
            new Promise<void>((resolve) => {
              child.once('exit', () => resolve());
              child.kill('SIGTERM');
            }),
        ),
      );
      await ours.outbox.close();
      await ours.pool.end();
    }
    const rate = (list: number[]) => (DELIVERY_JOBS * list.length) / list.reduce((a, b) => a + b, 0);
    const one = rate(seconds.one!);
    const four = rate(seconds.four!);
    console.log(
      `delivery through the Dispatcher to the sandbox (${SERVICE_LATENCY_MS} ms latency, ${WORKER_CONCURRENCY} sends in flight per worker), ${DELIVERY_JOBS} jobs per run:`,
    );
    console.log(`  1 worker process    ${fmt(one)}`);
    console.log(`  4 worker processes  ${fmt(four)}   ratio 4/1 ${(four / one).toFixed(2)}x`);
  } finally {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await world.close();
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  try {
    // POSTBACK_BENCH_PARTS=enqueue,claim,delivery runs a subset (all by default).
    const parts = (process.env.POSTBACK_BENCH_PARTS ?? 'enqueue,claim,delivery').split(',');
    if (parts.includes('enqueue')) await benchEnqueue();
    if (parts.includes('claim')) await benchClaimComplete();
    if (parts.includes('delivery')) await benchDelivery();
  } finally {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
  console.log(`total ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

await main();

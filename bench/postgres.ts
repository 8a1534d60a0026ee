/**
 * The Postgres outbox against pg-boss on the same server, measured side by side in one run:
 *
 * 1. Enqueue: ours = `outbox.confirm(tx, ...)` inside a BEGIN/COMMIT of the caller (the transactional
 *    outbox), 50 in flight; pg-boss = `send()` with 50 in flight (its own autocommit), and, for the
 *    exact same work, `send(..., { db })` inside the same kind of transaction. Target: ours ahead.
 * 2. Claim + complete with a no-op handler, 4 concurrent consumers, batches of 10: ours = `claim` then
 *    `complete` per job (what the Dispatcher does: each job has its own outcome; the outbox records the
 *    outcomes made together in one batch), and the same with `preparedStatements: false` (how it ran
 *    before issue 25); pg-boss = `fetch` then `complete(name, id)` per job (the same work), and
 *    `complete(name, ids)` once per batch (what its `work()` does, its best mode). Each variant's prefill
 *    is untimed (the enqueue part measures that); the rates with it are printed too. Target: ours ahead
 *    of pg-boss's best mode.
 * 3. Delivery through the Dispatcher to a local sandbox of the ad service: 4 worker outboxes (own pools,
 *    own Dispatchers) vs 1 on one queue, with the CPU each job cost (the worker processes, their Postgres
 *    backends read from /proc, this process: the sandbox and the polling) and the rate that CPU allows
 *    on this machine's cores. Target ≥ 3×.
 *
 * The machine is shared, so variants run interleaved in short slices and each rate is total jobs over
 * total time. Bounded in count (ROUNDS × SLICE) and time (MAX_MS per part). Every variant gets a fresh
 * schema, dropped at the end. Pools are capped at 10 connections (the server's limit is shared).
 *
 * Run: node --conditions=@postback/source bench/postgres.ts
 */
import pg from 'pg';
import PgBoss from 'pg-boss';
import { benchDelivery } from './postgres-delivery.ts';
import {
  backendCpu,
  dropSchemas,
  fmt,
  inFlight,
  inTx,
  ourOutbox,
  POOL_MAX,
  schemas,
  tag,
  URL_,
  withAppName,
} from './postgres-world.ts';

const IN_FLIGHT = 50;
const ROUNDS = 4;
const SLICE = 1_000;
const MAX_MS = 20_000;
const CONSUMERS = 4;
const BATCH = 10;
const QUEUE = 'postback_bench';

const clickedAt = Date.now() - 60_000;
const click = (i: number) => ({ token: `tok_${i.toString(36)}_bench`, clickedAt });

async function startBoss(name: string): Promise<PgBoss> {
  const schema = `pbbench_${name}_${tag}`;
  schemas.push(schema);
  const boss = new PgBoss({
    connectionString: withAppName(URL_, schema),
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

/**
 * A variant: `prepare` (untimed, e.g. the prefill) then `run`, which returns how many jobs it handled;
 * `app`: the application_name of its connections, to count their server CPU.
 */
type Variant =
  | ((round: number) => Promise<number>)
  | { prepare: (round: number) => Promise<void>; run: (round: number) => Promise<number>; app?: string };

interface Rates {
  /** Jobs per second over the time of `run` only. */
  rate: Record<string, number>;
  /** Jobs per second over the time of `prepare` and `run` together. */
  withPrepare: Record<string, number>;
  /** CPU per job during `run`, µs: the server's backends of the variant (its `app`) and this process. */
  cpu: Record<string, { server: number; client: number }>;
}

/** Interleaves slices of each variant (round after round, in turn). */
async function interleave(variants: Record<string, Variant>): Promise<Rates> {
  const totals = Object.fromEntries(
    Object.keys(variants).map((k) => [k, { jobs: 0, ms: 0, prepareMs: 0, server: 0, client: 0 }]),
  );
  const started = Date.now();
  for (let round = 0; round < ROUNDS && Date.now() - started < MAX_MS; round += 1) {
    for (const [name, variant] of Object.entries(variants)) {
      const total = totals[name]!;
      const { prepare, run, app } =
        typeof variant === 'function' ? { prepare: undefined, run: variant, app: undefined } : variant;
      if (prepare !== undefined) {
        const p0 = performance.now();
        await prepare(round);
        total.prepareMs += performance.now() - p0;
      }
      const server0 = app === undefined ? null : await backendCpu(app);
      const client0 = process.cpuUsage();
      const t0 = performance.now();
      const jobs = await run(round);
      total.ms += performance.now() - t0;
      const client = process.cpuUsage(client0);
      total.client += client.user + client.system;
      if (app !== undefined && server0 !== null)
        for (const [pid, used] of await backendCpu(app)) total.server += used - (server0.get(pid) ?? 0);
      total.jobs += jobs;
    }
  }
  const each = <T>(f: (t: (typeof totals)[string]) => T) =>
    Object.fromEntries(Object.entries(totals).map(([k, t]) => [k, f(t)]));
  return {
    rate: each((t) => (t.jobs / t.ms) * 1000),
    withPrepare: each((t) => (t.jobs / (t.ms + t.prepareMs)) * 1000),
    cpu: each((t) => ({ server: t.server / t.jobs, client: t.client / t.jobs })),
  };
}

async function benchEnqueue(): Promise<void> {
  const ours = await ourOutbox('enq');
  const boss = await startBoss('enq_boss');
  const bossTx = await startBoss('enq_bosstx');
  const bossTxPool = new pg.Pool({ connectionString: URL_, max: POOL_MAX });
  try {
    const { rate: rates } = await interleave({
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
  // The same outbox with `preparedStatements: false`: how it ran before issue 25, side by side.
  const plain = await ourOutbox('claim_plain', false);
  const bossEach = await startBoss('claim_each');
  const bossBatch = await startBoss('claim_batch');
  const prefillOurs = (n: number, round: number, into = ours) =>
    into.pool.query(
      `INSERT INTO "${into.schema}".jobs (kind, order_id, state, created_at, updated_at, next_attempt_at, deadline, click_token, value_micros, clicked_at)
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
    const measured = interleave({
      ours: {
        app: ours.schema,
        prepare: async (round) => {
          await prefillOurs(SLICE, round);
        },
        run: () =>
          consume(async () => {
            const jobs = await ours.outbox.claim({ now: Date.now(), limit: BATCH, leaseMs: 60_000 });
            await Promise.all(
              jobs.map((job) => ours.outbox.complete(job, { now: Date.now(), campaignId: 'cmp_bench' })),
            );
            return jobs.length;
          }),
      },
      oursPlain: {
        app: plain.schema,
        prepare: async (round) => {
          await prefillOurs(SLICE, round, plain);
        },
        run: () =>
          consume(async () => {
            const jobs = await plain.outbox.claim({ now: Date.now(), limit: BATCH, leaseMs: 60_000 });
            await Promise.all(
              jobs.map((job) => plain.outbox.complete(job, { now: Date.now(), campaignId: 'cmp_bench' })),
            );
            return jobs.length;
          }),
      },
      pgBossEach: {
        app: `pbbench_claim_each_${tag}`,
        prepare: async () => {
          await prefillBoss(bossEach, SLICE);
        },
        run: () =>
          consume(async () => {
            const jobs = await bossEach.fetch(QUEUE, { batchSize: BATCH });
            await Promise.all(jobs.map((job) => bossEach.complete(QUEUE, job.id)));
            return jobs.length;
          }),
      },
      pgBossBatch: {
        app: `pbbench_claim_batch_${tag}`,
        prepare: async () => {
          await prefillBoss(bossBatch, SLICE);
        },
        run: () =>
          consume(async () => {
            const jobs = await bossBatch.fetch(QUEUE, { batchSize: BATCH });
            if (jobs.length > 0)
              await bossBatch.complete(
                QUEUE,
                jobs.map((job) => job.id),
              );
            return jobs.length;
          }),
      },
    });
    const { rate: rates, withPrepare, cpu } = await measured;
    const cpuOf = (name: string) =>
      `${Math.round(cpu[name]!.server + cpu[name]!.client)} µs (server ${Math.round(cpu[name]!.server)}, client ${Math.round(cpu[name]!.client)})`;
    console.log(`claim + complete (no-op handler), ${CONSUMERS} consumers, batches of ${BATCH}:`);
    console.log(`  ours claim + complete per job        ${fmt(rates.ours!)}`);
    console.log(
      `  pg-boss fetch + complete per job     ${fmt(rates.pgBossEach!)}   ratio ours/pg-boss ${(rates.ours! / rates.pgBossEach!).toFixed(2)}x`,
    );
    console.log(
      `  pg-boss fetch + complete per batch   ${fmt(rates.pgBossBatch!)}   ratio ${(rates.ours! / rates.pgBossBatch!).toFixed(2)}x`,
    );
    console.log(
      `  ours with preparedStatements: false  ${fmt(rates.oursPlain!)}   ratio prepared/plain ${(rates.ours! / rates.oursPlain!).toFixed(2)}x; plain/pg-boss per batch ${(rates.oursPlain! / rates.pgBossBatch!).toFixed(2)}x`,
    );
    console.log(
      `  CPU per job: ours ${cpuOf('ours')}; plain ${cpuOf('oursPlain')}; pg-boss per job ${cpuOf('pgBossEach')}; per batch ${cpuOf('pgBossBatch')}`,
    );
    console.log(
      `  with each one's prefill of ${SLICE} jobs a round in its time: ours ${fmt(withPrepare.ours!)}, ratios ${(withPrepare.ours! / withPrepare.pgBossEach!).toFixed(2)}x per job, ${(withPrepare.ours! / withPrepare.pgBossBatch!).toFixed(2)}x per batch`,
    );
  } finally {
    await ours.outbox.close();
    await ours.pool.end();
    await plain.outbox.close();
    await plain.pool.end();
    await bossEach.stop({ graceful: false, wait: true });
    await bossBatch.stop({ graceful: false, wait: true });
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
    await dropSchemas();
  }
  console.log(`total ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

await main();

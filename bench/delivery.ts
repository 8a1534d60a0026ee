/**
 * Benchmark: jobs delivered per second by the Dispatcher (SQLite outbox, durable at every step) to the
 * sandbox, side by side in one run with
 *  - a bare loop doing the same POSTs with the same client and the same concurrency (no queue at all):
 *    target ratio Dispatcher / bare >= 0.8;
 *  - the same Dispatcher with SQLite `synchronous: 'full-async'` (as durable as `full`, the WAL fsynced off
 *    the event loop): the same two targets;
 *  - the same Dispatcher with SQLite `synchronous=normal` (informational: how much of the gap is fsync);
 *  - a BullMQ worker (Redis 127.0.0.1:6379, a unique queue name, obliterated after) doing the same POSTs
 *    with the same client and concurrency 50: target ratio Dispatcher / BullMQ > 1.
 * Every run delivers the same number of fresh orders to its own sandbox account, bounded by count and time.
 * Contenders run in ABBA order round by round; Dispatcher lines also give the SQLite commits of a run.
 *
 *   node --conditions=@postback/source bench/delivery.ts [--jobs 2000] [--concurrency 50] [--rounds 5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from '@postback/client';
import { createDispatcher } from '@postback/core';
import { createSqliteOutbox } from '@postback/sqlite';
import { Queue, Worker } from 'bullmq';
import { type SandboxWorld, startSandboxWorld } from '../test/helpers/sandbox-world.ts';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '5' },
  },
});
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);
/** Each measured run must finish within this. */
const RUN_LIMIT_MS = 25_000;

interface Run {
  name: string;
  seconds: number;
  delivered: number;
  /** SQLite transactions committed during the measured part (Dispatcher runs only). */
  commits?: number;
}

async function withWorld<T>(body: (world: SandboxWorld, tokens: string[]) => Promise<T>): Promise<T> {
  const world = await startSandboxWorld();
  try {
    // A handful of clicks: many orders may be attributed to one click, and the bench is about delivery.
    const tokens = (await world.clicks(50)).map((c) => c.token);
    return await body(world, tokens);
  } finally {
    await world.close();
  }
}

function withinLimit<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not finish within ${RUN_LIMIT_MS} ms`)),
      RUN_LIMIT_MS,
    );
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

type Synchronous = 'full' | 'full-async' | 'normal';

async function dispatcherRun(synchronous: Synchronous): Promise<Run> {
  return withWorld(async (world, tokens) => {
    const dir = mkdtempSync(join(tmpdir(), 'postback-bench-'));
    const outbox = createSqliteOutbox({ filename: join(dir, 'bench.db'), synchronous });
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    try {
      const now = Date.now();
      await Promise.all(
        Array.from({ length: JOBS }, (_, i) =>
          outbox.confirm({
            orderId: `d-${i}`,
            valueMicros: 1_000,
            click: { token: tokens[i % tokens.length] as string, clickedAt: now },
          }),
        ),
      );
      const dispatcher = createDispatcher({
        outbox,
        client,
        concurrency: CONCURRENCY,
        batchSize: CONCURRENCY,
      });
      let count = 0;
      const done = new Promise<void>((resolve) => {
        dispatcher.on('delivered', () => {
          count += 1;
          if (count === JOBS) resolve();
        });
      });
      const commitsBefore = outbox.commits;
      const t0 = performance.now();
      dispatcher.start();
      await withinLimit(done, 'dispatcher');
      const seconds = (performance.now() - t0) / 1000;
      const commits = outbox.commits - commitsBefore;
      await dispatcher.stop({ timeoutMs: 5_000 });
      const delivered = (await outbox.stats(Date.now())).counts.delivered;
      return { name: `Dispatcher (SQLite ${synchronous})`, seconds, delivered, commits };
    } finally {
      await client.close();
      await outbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

async function bareRun(): Promise<Run> {
  return withWorld(async (world, tokens) => {
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    try {
      let next = 0;
      let delivered = 0;
      const t0 = performance.now();
      const loop = async () => {
        while (next < JOBS) {
          const i = next++;
          await client.conversions.confirm({
            click_token: tokens[i % tokens.length] as string,
            order_id: `b-${i}`,
            value_micros: 1_000,
          });
          delivered += 1;
        }
      };
      await withinLimit(Promise.all(Array.from({ length: CONCURRENCY }, loop)), 'bare loop');
      return { name: 'bare loop (same client)', seconds: (performance.now() - t0) / 1000, delivered };
    } finally {
      await client.close();
    }
  });
}

async function bullmqRun(): Promise<Run> {
  return withWorld(async (world, tokens) => {
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    const connection = { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null };
    const name = `postback-bench-${process.pid}-${Date.now()}`;
    const queue = new Queue(name, { connection });
    let worker: Worker | undefined;
    try {
      await queue.addBulk(
        Array.from({ length: JOBS }, (_, i) => ({
          name: 'confirm',
          data: { click_token: tokens[i % tokens.length] as string, order_id: `q-${i}`, value_micros: 1_000 },
          opts: { attempts: 5, backoff: { type: 'exponential', delay: 100 }, removeOnComplete: true },
        })),
      );
      let delivered = 0;
      const done = new Promise<void>((resolve) => {
        worker = new Worker(
          name,
          async (job) => {
            await client.conversions.confirm(job.data);
          },
          { connection, concurrency: CONCURRENCY, autorun: false },
        );
        worker.on('completed', () => {
          delivered += 1;
          if (delivered === JOBS) resolve();
        });
      });
      const t0 = performance.now();
      void worker?.run();
      await withinLimit(done, 'BullMQ worker');
      return { name: 'BullMQ worker (Redis)', seconds: (performance.now() - t0) / 1000, delivered };
    } finally {
      await worker?.close();
      await queue.obliterate({ force: true });
      await queue.close();
      await client.close();
    }
  });
}

const rate = (run: Run) => run.delivered / run.seconds;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

// The machine is shared: contenders run in alternating rounds so noise hits all of them alike.
type Contender = 'full' | 'fullAsync' | 'normal' | 'bare' | 'bullmq';
const contenders: Record<Contender, { name: string; run: () => Promise<Run> }> = {
  full: { name: 'Dispatcher (SQLite, full)', run: () => dispatcherRun('full') },
  fullAsync: { name: 'Dispatcher (SQLite, full-async)', run: () => dispatcherRun('full-async') },
  normal: { name: 'Dispatcher (SQLite, normal)', run: () => dispatcherRun('normal') },
  bare: { name: 'bare loop (same client)', run: bareRun },
  bullmq: { name: 'BullMQ worker (Redis)', run: bullmqRun },
};
const keys = Object.keys(contenders) as Contender[];
const rates = Object.fromEntries(keys.map((key) => [key, [] as number[]])) as Record<Contender, number[]>;
const commits = Object.fromEntries(keys.map((key) => [key, [] as number[]])) as Record<Contender, number[]>;
const benchStarted = Date.now();
for (let round = 0; round < ROUNDS && Date.now() - benchStarted < 60_000; round++) {
  // ABBA: every other round runs the contenders in reverse order.
  for (const key of round % 2 === 0 ? keys : [...keys].reverse()) {
    const run = await contenders[key].run();
    rates[key].push(rate(run));
    if (run.commits !== undefined) commits[key].push(run.commits);
  }
}
console.log(
  `delivery: ${JOBS} confirmations to the sandbox per run, concurrency ${CONCURRENCY}, ${rates.full.length} alternating rounds (median)`,
);
for (const key of keys) {
  const perRun = commits[key].length === 0 ? '' : `, ${median(commits[key])} commits per run`;
  console.log(
    `  ${contenders[key].name.padEnd(32)} ${median(rates[key]).toFixed(0).padStart(6)} jobs/s  (rounds: ${rates[key].map((r) => r.toFixed(0)).join(', ')}${perRun})`,
  );
}
// Ratios are taken per round (contenders measured minutes apart would see different machine load),
// then their median.
const ratios = (a: number[], b: number[]) => median(a.map((x, i) => x / (b[i] as number)));
const report = (label: string, value: number, target: string, ok: boolean) =>
  console.log(`  ${label.padEnd(44)} ${value.toFixed(2)} (target ${target}) ${ok ? 'OK' : 'MISSED'}`);
for (const key of ['full', 'fullAsync'] as const) {
  const vsBare = ratios(rates[key], rates.bare);
  const vsBull = ratios(rates[key], rates.bullmq);
  report(`ratio ${contenders[key].name} / bare loop:`, vsBare, '>= 0.8', vsBare >= 0.8);
  report(`ratio ${contenders[key].name} / BullMQ:`, vsBull, '> 1', vsBull > 1);
}
console.log(
  `  (informational) Dispatcher with synchronous=normal / bare loop: ${ratios(rates.normal, rates.bare).toFixed(2)}`,
);

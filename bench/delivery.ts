/**
 * Benchmark: jobs delivered per second by the Dispatcher (SQLite outbox, durable at every step) to the
 * sandbox, side by side in one run with
 *  - a bare loop doing the same POSTs with the same client and the same concurrency (no queue at all):
 *    target ratio Dispatcher / bare >= 0.8;
 *  - the same Dispatcher with SQLite `synchronous=normal` (informational: how much of the gap is fsync);
 *  - a BullMQ worker (Redis 127.0.0.1:6379, a unique queue name, obliterated after) doing the same POSTs
 *    with the same client and concurrency 50: target ratio Dispatcher / BullMQ > 1.
 * Every run delivers the same number of fresh orders to its own sandbox account, bounded by count and time.
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

async function dispatcherRun(synchronous: 'full' | 'normal' = 'full'): Promise<Run> {
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
      const t0 = performance.now();
      dispatcher.start();
      await withinLimit(done, 'dispatcher');
      const seconds = (performance.now() - t0) / 1000;
      await dispatcher.stop({ timeoutMs: 5_000 });
      const delivered = (await outbox.stats(Date.now())).counts.delivered;
      return { name: `Dispatcher (SQLite ${synchronous})`, seconds, delivered };
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
const rates: Record<'dispatcher' | 'normal' | 'bare' | 'bullmq', number[]> = {
  dispatcher: [],
  normal: [],
  bare: [],
  bullmq: [],
};
const names = {
  dispatcher: 'Dispatcher (SQLite, full)',
  normal: 'Dispatcher (SQLite, normal)',
  bare: 'bare loop (same client)',
  bullmq: 'BullMQ worker (Redis)',
};
const benchStarted = Date.now();
for (let round = 0; round < ROUNDS && Date.now() - benchStarted < 60_000; round++) {
  rates.dispatcher.push(rate(await dispatcherRun()));
  rates.normal.push(rate(await dispatcherRun('normal')));
  rates.bare.push(rate(await bareRun()));
  rates.bullmq.push(rate(await bullmqRun()));
}
console.log(
  `delivery: ${JOBS} confirmations to the sandbox per run, concurrency ${CONCURRENCY}, ${rates.dispatcher.length} alternating rounds (median)`,
);
for (const key of ['dispatcher', 'normal', 'bare', 'bullmq'] as const) {
  console.log(
    `  ${names[key].padEnd(28)} ${median(rates[key]).toFixed(0).padStart(6)} jobs/s  (rounds: ${rates[key].map((r) => r.toFixed(0)).join(', ')})`,
  );
}
// Ratios are taken per round (contenders measured minutes apart would see different machine load),
// then their median.
const ratios = (a: number[], b: number[]) => median(a.map((x, i) => x / (b[i] as number)));
const vsBare = ratios(rates.dispatcher, rates.bare);
const vsBull = ratios(rates.dispatcher, rates.bullmq);
console.log(
  `  ratio Dispatcher / bare loop: ${vsBare.toFixed(2)} (target >= 0.8) ${vsBare >= 0.8 ? 'OK' : 'MISSED'}`,
);
console.log(
  `  ratio Dispatcher / BullMQ:    ${vsBull.toFixed(2)} (target > 1) ${vsBull > 1 ? 'OK' : 'MISSED'}`,
);
console.log(
  `  (informational) Dispatcher with synchronous=normal / bare loop: ${ratios(rates.normal, rates.bare).toFixed(2)} (the rest of the gap is fsync per commit)`,
);

/**
 * Benchmark: jobs delivered per second by the Dispatcher (SQLite outbox, durable at every step, its writes
 * on the outbox's own thread as by default) to the sandbox, side by side in one run with
 *  - a bare loop doing the same POSTs with the same client and the same concurrency (no queue at all):
 *    target ratio Dispatcher / bare >= 0.8;
 *  - the same Dispatcher with SQLite `synchronous=normal` (informational: how much of the gap is fsync);
 *  - the same Dispatcher with the outbox's writes on the main thread (`thread: false`; informational: what
 *    the writer thread is worth);
 *  - the same Dispatcher at the library's default `pace: 'adaptive'` (the others run at `off`): target
 *    ratio adaptive / off >= 0.95, a worker in a process of its own reading its own work as its own;
 *  - a BullMQ worker (Redis 127.0.0.1:6379, a unique queue name, obliterated after) doing the same POSTs
 *    with the same client and concurrency 50: target ratio Dispatcher / BullMQ > 1.
 * Every run delivers the same number of fresh orders to its own sandbox account, bounded by count and time.
 * Contenders run in ABBA order round by round, after `--warmup` untimed rounds of each; Dispatcher lines
 * also give the SQLite commits of a run. Each line gives the main thread's CPU time per job (user + system,
 * `process.threadCpuUsage`): what delivery costs the event loop of the app it runs in, steadier than the
 * rate on a shared machine; and the CPU time of all of this process's threads per job (`process.cpuUsage`:
 * the outbox's writer thread, GC and compiler threads too): on a machine whose cores are all busy, what
 * decides the rate. The measured rounds stop after 90 s.
 *
 * The sandbox runs in a child process by default (`--sandbox child`), as the ad service runs elsewhere in
 * production: its work then loads neither contender's event loop. `--sandbox in-process` puts it on the
 * benchmark's own event loop, where the bare loop pays for client and server alike.
 *
 *   node --conditions=@postback/source bench/delivery.ts [--jobs 2000] [--concurrency 50] [--rounds 5]
 *     [--warmup 1] [--only full,normal,local,bare,bullmq] [--sandbox child|in-process]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from '@postback/client';
import { createDispatcher } from '@postback/core';
import { startSandboxWorld } from '@postback/sandbox/testing';
import { createSqliteOutbox } from '@postback/sqlite';
import { Queue, Worker } from 'bullmq';
import { bareLoop, confirmInputs, deliveredAll, median, withinLimit, withWorld } from './run-world.ts';
import { startChildSandboxWorld } from './sandbox-process.ts';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '50' },
    /** Jobs per claim (the Dispatcher's `batchSize`); defaults to the concurrency. */
    batch: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    /** Untimed rounds first (JIT, SQLite page cache, the outbox thread's start), for every contender alike. */
    warmup: { type: 'string', default: '1' },
    /** Comma-separated contenders to run (full, normal, local, adaptive, bare, bullmq). */
    only: { type: 'string' },
    /** Where the sandbox runs: `child` (its own process, as a remote service would be) or `in-process`. */
    sandbox: { type: 'string', default: 'child' },
  },
});
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const WARMUP = Number(values.warmup);
const CONCURRENCY = Number(values.concurrency);
const BATCH = Number(values.batch ?? values.concurrency);
const SANDBOX = values.sandbox;
if (SANDBOX !== 'child' && SANDBOX !== 'in-process') throw new Error('--sandbox is child or in-process');
const startWorld = SANDBOX === 'child' ? startChildSandboxWorld : startSandboxWorld;
/** Each measured run must finish within this. */
const RUN_LIMIT_MS = 25_000;

interface Run {
  name: string;
  seconds: number;
  delivered: number;
  /** SQLite transactions committed during the measured part (Dispatcher runs only). */
  commits?: number;
  /** CPU time of the main thread (user + system) during the measured part, µs: what the app's event loop paid. */
  cpuUs: number;
  /** CPU time of all of this process's threads during the measured part, µs. */
  processCpuUs: number;
}

/** CPU time of this (the main) thread and of the whole process so far, µs. */
function cpuNow(): { thread: number; process: number } {
  const thread = process.threadCpuUsage();
  const all = process.cpuUsage();
  return { thread: thread.user + thread.system, process: all.user + all.system };
}

/** CPU spent since `start` (from {@link cpuNow}). */
function cpuSince(start: { thread: number; process: number }): { cpuUs: number; processCpuUs: number } {
  const end = cpuNow();
  return { cpuUs: end.thread - start.thread, processCpuUs: end.process - start.process };
}

type Synchronous = 'full' | 'normal';

/**
 * A Dispatcher run. `pace` is `off` for the measured worker (a dedicated worker, as `postback worker` runs:
 * no pages to protect); `adaptive` (the library's default, for a worker inside a shop) is informational.
 */
async function dispatcherRun(
  synchronous: Synchronous,
  thread = true,
  pace: 'off' | 'adaptive' = 'off',
): Promise<Run> {
  return withWorld(startWorld, async (world, tokens) => {
    const dir = mkdtempSync(join(tmpdir(), 'postback-bench-'));
    const outbox = createSqliteOutbox({ filename: join(dir, 'bench.db'), synchronous, thread });
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    try {
      await Promise.all(confirmInputs('d', JOBS, tokens).map((input) => outbox.confirm(input)));
      const dispatcher = createDispatcher({
        outbox,
        client,
        concurrency: CONCURRENCY,
        batchSize: BATCH,
        pace,
      });
      const done = deliveredAll(dispatcher, JOBS);
      const commitsBefore = outbox.commits;
      const cpu0 = cpuNow();
      const t0 = performance.now();
      dispatcher.start();
      await withinLimit(done, 'dispatcher', RUN_LIMIT_MS);
      const seconds = (performance.now() - t0) / 1000;
      const cpu = cpuSince(cpu0);
      const commits = outbox.commits - commitsBefore;
      await dispatcher.stop({ timeoutMs: 5_000 });
      const delivered = (await outbox.stats(Date.now())).counts.delivered;
      return {
        name: `Dispatcher (SQLite ${synchronous}, thread: ${thread})`,
        seconds,
        delivered,
        commits,
        ...cpu,
      };
    } finally {
      await client.close();
      await outbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

async function bareRun(): Promise<Run> {
  return withWorld(startWorld, async (world, tokens) => {
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    try {
      const cpu0 = cpuNow();
      const t0 = performance.now();
      await bareLoop(client, tokens, { jobs: JOBS, concurrency: CONCURRENCY, limitMs: RUN_LIMIT_MS });
      const seconds = (performance.now() - t0) / 1000;
      return { name: 'bare loop (same client)', seconds, delivered: JOBS, ...cpuSince(cpu0) };
    } finally {
      await client.close();
    }
  });
}

async function bullmqRun(): Promise<Run> {
  return withWorld(startWorld, async (world, tokens) => {
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    const connection = { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null };
    const name = `postback-bench-${process.pid}-${Date.now()}`;
    const queue = new Queue(name, { connection });
    let worker: Worker | undefined;
    try {
      await queue.addBulk(
        Array.from({ length: JOBS }, (_, i) => ({
          name: 'confirm',
          data: {
            click_token: tokens[i % tokens.length] as string,
            order_id: `q-${i}`,
            value_micros: 1_000,
          },
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
      const cpu0 = cpuNow();
      const t0 = performance.now();
      void worker?.run();
      await withinLimit(done, 'BullMQ worker', RUN_LIMIT_MS);
      const seconds = (performance.now() - t0) / 1000;
      return { name: 'BullMQ worker (Redis)', seconds, delivered, ...cpuSince(cpu0) };
    } finally {
      await worker?.close();
      await queue.obliterate({ force: true });
      await queue.close();
      await client.close();
    }
  });
}

const rate = (run: Run) => run.delivered / run.seconds;

// The machine is shared: contenders run in alternating rounds so noise hits all of them alike.
type Contender = 'full' | 'normal' | 'local' | 'adaptive' | 'bare' | 'bullmq';
const contenders: Record<Contender, { name: string; run: () => Promise<Run> }> = {
  full: { name: 'Dispatcher (SQLite, full)', run: () => dispatcherRun('full') },
  normal: { name: 'Dispatcher (SQLite, normal)', run: () => dispatcherRun('normal') },
  local: { name: 'Dispatcher (SQLite, full, no thread)', run: () => dispatcherRun('full', false) },
  adaptive: {
    name: 'Dispatcher (SQLite, full, pace adaptive)',
    run: () => dispatcherRun('full', true, 'adaptive'),
  },
  bare: { name: 'bare loop (same client)', run: bareRun },
  bullmq: { name: 'BullMQ worker (Redis)', run: bullmqRun },
};
const only = values.only?.split(',');
const keys = (Object.keys(contenders) as Contender[]).filter(
  (key) => only === undefined || only.includes(key),
);
/** One empty list of measurements per contender. */
const perContender = () =>
  Object.fromEntries((Object.keys(contenders) as Contender[]).map((key) => [key, [] as number[]])) as Record<
    Contender,
    number[]
  >;
const rates = perContender();
const cpuPerJob = perContender();
const processCpuPerJob = perContender();
const commits = perContender();
const benchStarted = Date.now();
for (let round = 0; round < WARMUP; round++) for (const key of keys) await contenders[key].run();
for (let round = 0; round < ROUNDS && Date.now() - benchStarted < 90_000; round++) {
  // ABBA: every other round runs the contenders in reverse order.
  for (const key of round % 2 === 0 ? keys : [...keys].reverse()) {
    const run = await contenders[key].run();
    rates[key].push(rate(run));
    cpuPerJob[key].push(run.cpuUs / run.delivered);
    processCpuPerJob[key].push(run.processCpuUs / run.delivered);
    if (run.commits !== undefined) commits[key].push(run.commits);
  }
}
console.log(
  `delivery: ${JOBS} confirmations to the sandbox (${SANDBOX}) per run, concurrency ${CONCURRENCY}, ${WARMUP} warm-up + ${rates[keys[0] as Contender].length} alternating rounds (median)`,
);
for (const key of keys) {
  const perRun = commits[key].length === 0 ? '' : `, ${median(commits[key])} commits per run`;
  console.log(
    `  ${contenders[key].name.padEnd(32)} ${median(rates[key]).toFixed(0).padStart(6)} jobs/s, CPU per job: ${median(cpuPerJob[key]).toFixed(1)} µs main thread, ${median(processCpuPerJob[key]).toFixed(1)} µs all threads  (rounds: ${rates[key].map((r) => r.toFixed(0)).join(', ')}${perRun})`,
  );
}
// Ratios are taken per round (contenders measured minutes apart would see different machine load),
// then their median. A ratio is shown only when both of its contenders ran (see `--only`).
const ratios = (a: number[], b: number[]) => median(a.map((x, i) => x / (b[i] as number)));
const report = (label: string, value: number, target: string, ok: boolean) =>
  console.log(`  ${label.padEnd(44)} ${value.toFixed(2)} (target ${target}) ${ok ? 'OK' : 'MISSED'}`);
const ran = (key: Contender) => rates[key].length > 0;
if (ran('full') && ran('bare')) {
  const vsBare = ratios(rates.full, rates.bare);
  report(`ratio ${contenders.full.name} / bare loop:`, vsBare, '>= 0.8', vsBare >= 0.8);
}
if (ran('full') && ran('bullmq')) {
  const vsBull = ratios(rates.full, rates.bullmq);
  report(`ratio ${contenders.full.name} / BullMQ:`, vsBull, '> 1', vsBull > 1);
}
if (ran('full') && ran('adaptive')) {
  const paced = ratios(rates.adaptive, rates.full);
  report("ratio pace 'adaptive' / 'off' (same Dispatcher):", paced, '>= 0.95', paced >= 0.95);
}
/** Contenders without a target of their own, each reported against the bare loop for what it explains. */
const informational: Array<[Contender, string]> = [
  ['normal', 'Dispatcher with synchronous=normal'],
  ['local', 'Dispatcher with its SQLite writes on the main thread (thread: false)'],
  ['adaptive', "Dispatcher with pace: 'adaptive' (the library's default, for a worker inside a shop)"],
];
for (const [key, label] of informational) {
  if (ran(key) && ran('bare')) {
    console.log(`  (informational) ${label} / bare loop: ${ratios(rates[key], rates.bare).toFixed(2)}`);
  }
}

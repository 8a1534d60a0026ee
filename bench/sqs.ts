/**
 * Benchmark: one worker (the core Dispatcher on the SQS outbox: long-poll ReceiveMessage, visibility
 * leases, batched DeleteMessageBatch) delivering to the sandbox of the ad service, on two SQS servers,
 * each served over real HTTP on 127.0.0.1 from a worker thread and spoken to by the real AWS SDK:
 *
 * - `emulator`: our in-memory emulator (`packages/sqs/test`), which caps a long poll at 20 ms here;
 * - `fauxqs`: an SQS emulator from npm whose long poll waits as AWS's does.
 *
 * Three figures per server:
 * 1. throughput: jobs/s of the worker on a backlog, side by side in ABBA rounds with
 *    - a bare SQS consumer on fauxqs, the anchor a user would otherwise write (the same SDK client:
 *      `ReceiveMessage` of 10, a POST of each, `DeleteMessageBatch`; `concurrency / 10` such loops). Target
 *      worker on fauxqs / bare SQS consumer >= 0.8;
 *    - the same worker at the default `pace: 'adaptive'` (the others at `off`). Target adaptive / off
 *      >= 0.95: a worker in a process of its own reads its own work as its own;
 *    - a bare loop doing the same POSTs with the same client and concurrency (no queue), and the same
 *      Dispatcher on core's memory outbox (what SQS adds), for scale.
 *    Also printed: the CPU per job of the thread that runs the worker, steadier than throughput on a busy
 *    machine; the SQS server's thread and the sandbox (a child process unless `--sandbox in-process`) are
 *    not counted.
 * 2. receive → send: a running worker (default batch 16, `waitTimeSeconds` 20) while pairs of jobs trickle
 *    in every 100 ms: per job, from the ReceiveMessage answer that brought it to the start of its POST.
 *    Target p99 < 100 ms (a claim that waited on an empty second receive kept received jobs 20 s).
 * 3. drain: `dispatcher.drain()` of 2 jobs with `waitTimeSeconds` 20. Target < 2 s (it was 40 s).
 *
 * Local servers answer in a millisecond or two, far below a real region's ~10–30 ms per call, which the
 * throughput ratio does not model: it measures our per-message overhead.
 *
 *   node --conditions=@postback/source bench/sqs.ts [--jobs 2000] [--concurrency 50] [--rounds 4]
 *     [--only fauxqs,fauxqs-adaptive,bare-sqs,emulator,memory,bare] [--no-latency] [--sandbox child|in-process]
 */
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type ReceiveMessageCommandOutput,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { createClient } from '@postback/client';
import { createDispatcher, createMemoryOutbox, type Outbox } from '@postback/core';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { createSqsOutbox, decodeJobBody, type SqsOutbox, type SqsOutboxOptions } from '@postback/sqs';
import {
  bareLoop,
  confirmInputs,
  deliveredAll,
  median,
  quantile,
  withinLimit,
  withWorld,
} from './run-world.ts';
import { startChildSandboxWorld } from './sandbox-process.ts';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '4' },
    /** Comma-separated throughput contenders to run (emulator, fauxqs, fauxqs-adaptive, bare-sqs, memory, bare). */
    only: { type: 'string' },
    /** Skip the latency figures (receive → send, drain). */
    'no-latency': { type: 'boolean', default: false },
    /** Where the sandbox runs: `child` (its own process, as a remote service would be) or `in-process`. */
    sandbox: { type: 'string', default: 'child' },
  },
});
if (values.sandbox !== 'child' && values.sandbox !== 'in-process')
  throw new Error('--sandbox is child or in-process');
const startWorld = values.sandbox === 'child' ? startChildSandboxWorld : startSandboxWorld;
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);
/** Each measured run must finish within this. */
const RUN_LIMIT_MS = 30_000;
/** The throughput rounds stop starting after this. */
const ROUNDS_LIMIT_MS = 150_000;
/** The trickle: this many pairs of jobs, one pair every TRICKLE_EVERY_MS. */
const TRICKLE_PAIRS = 25;
const TRICKLE_EVERY_MS = 100;
/** AWS's longest long poll and the outbox's default. */
const LONG_POLL_SECONDS = 20;

const SERVERS = {
  emulator: '../packages/sqs/test/emulator-thread.ts',
  fauxqs: '../packages/sqs/test/fauxqs-thread.ts',
} as const;
type ServerKind = keyof typeof SERVERS;
const KINDS = Object.keys(SERVERS) as ServerKind[];

/** An SQS server in its worker thread, and a request/response channel to it. */
async function startServer(kind: ServerKind): Promise<{
  endpoint: string;
  call(op: string, arg?: object): Promise<unknown>;
  close(): Promise<void>;
}> {
  const thread = new Worker(new URL(SERVERS[kind], import.meta.url), {
    execArgv: ['--conditions=@postback/source'],
  });
  const pending = new Map<number, (value: unknown) => void>();
  let ids = 0;
  const ready = new Promise<unknown>((resolve) => pending.set(0, resolve));
  thread.on('message', ({ id, value }: { id: number; value: unknown }) => {
    pending.get(id)?.(value);
    pending.delete(id);
  });
  const call = (op: string, arg: object = {}) =>
    new Promise<unknown>((resolve) => {
      const id = ++ids;
      pending.set(id, resolve);
      thread.postMessage({ id, op, ...arg });
    });
  const endpoint = (await ready) as string;
  return {
    endpoint,
    call,
    async close() {
      await call('close');
      await thread.terminate();
    },
  };
}

/** What a run on SQS gets: a sandbox world, its click tokens, an outbox on fresh queues, and the SDK client. */
interface SqsRun {
  world: SandboxWorld;
  tokens: string[];
  outbox: SqsOutbox;
  sqsClient: SQSClient;
  left(): Promise<number>;
}

/** Starts `kind` and a sandbox world, opens FIFO queues and an outbox on them, runs `body`, closes all. */
async function onSqs<T>(
  kind: ServerKind,
  options: Partial<SqsOutboxOptions>,
  body: (run: SqsRun) => Promise<T>,
): Promise<T> {
  return withWorld(startWorld, async (world, tokens) => {
    const sqs = await startServer(kind);
    const deadLetterQueueUrl = (await sqs.call('createQueue', { name: 'bench-dlq.fifo' })) as string;
    const queueUrl = (await sqs.call('createQueue', { name: 'bench.fifo' })) as string;
    const sqsClient = new SQSClient({
      region: 'us-east-1',
      endpoint: sqs.endpoint,
      credentials: { accessKeyId: 'AKIAEXAMPLEBENCH', secretAccessKey: 'bench-secret' },
    });
    const outbox = createSqsOutbox({ queueUrl, deadLetterQueueUrl, client: sqsClient, ...options });
    try {
      const left = async () => (await sqs.call('count', { url: queueUrl })) as number;
      return await body({ world, tokens, outbox, sqsClient, left });
    } finally {
      await outbox.close();
      sqsClient.destroy();
      await sqs.close();
    }
  });
}

/** Jobs per second, and this thread's CPU per job (µs): the server threads' work is not counted. */
interface Rate {
  jobsPerSecond: number;
  cpuUsPerJob: number;
}

/** Times `run` (which delivers `jobs` jobs) by the clock and by this thread's CPU. */
async function timed(jobs: number, run: () => Promise<void>): Promise<Rate> {
  const cpu0 = process.threadCpuUsage();
  const t0 = performance.now();
  await run();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.threadCpuUsage(cpu0);
  return { jobsPerSecond: jobs / seconds, cpuUsPerJob: (cpu.user + cpu.system) / jobs };
}

/** Jobs per second of the worker on SQS, on a backlog of `jobs`, at `pace`. */
async function sqsRun(kind: ServerKind, jobs = JOBS, pace: 'off' | 'adaptive' = 'off'): Promise<Rate> {
  return onSqs(kind, { waitTimeSeconds: 1 }, async ({ world, tokens, outbox, left }) => {
    if (!(await outbox.confirmMany(confirmInputs('s', jobs, tokens))).every((r) => r.ok))
      throw new Error('enqueue failed');
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    try {
      const dispatcher = createDispatcher({
        outbox,
        client,
        concurrency: CONCURRENCY,
        batchSize: CONCURRENCY,
        pollIntervalMs: 1,
        wake: () => () => outbox.interruptClaims(),
        // `off`: a dedicated worker with no pages to protect; `adaptive`: the default, in a process of its own.
        pace,
      });
      const done = deliveredAll(dispatcher, jobs);
      const rate = await timed(jobs, async () => {
        dispatcher.start();
        await withinLimit(done, `worker on ${kind}`, RUN_LIMIT_MS);
      });
      await dispatcher.stop({ timeoutMs: 5_000 });
      if ((await left()) !== 0) throw new Error(`messages left in the ${kind} queue after delivery`);
      return rate;
    } finally {
      await client.close();
    }
  });
}

/**
 * Jobs per second of the anchor a user would otherwise write on SQS: the same SDK client, `ReceiveMessage`
 * of 10, a POST of each message's job (its body parsed with `JSON.parse`), then one `DeleteMessageBatch`;
 * `concurrency / 10` such loops side by side, so as many POSTs in flight as the worker's `concurrency`.
 * A job counts once its message is deleted, as the worker's counts once its outcome is recorded.
 */
async function bareSqsRun(kind: ServerKind, jobs = JOBS): Promise<Rate> {
  return onSqs(kind, { waitTimeSeconds: 1 }, async ({ world, tokens, outbox, sqsClient, left }) => {
    if (!(await outbox.confirmMany(confirmInputs('q', jobs, tokens))).every((r) => r.ok))
      throw new Error('enqueue failed');
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    const stop = new AbortController();
    let deleted = 0;
    const consume = async () => {
      while (deleted < jobs) {
        const { Messages = [] } = await sqsClient
          .send(
            new ReceiveMessageCommand({
              QueueUrl: outbox.queueUrl,
              MaxNumberOfMessages: 10,
              WaitTimeSeconds: 1,
              VisibilityTimeout: 30,
            }),
            { abortSignal: stop.signal },
          )
          .catch((err: unknown) => {
            if (stop.signal.aborted) return {} as ReceiveMessageCommandOutput;
            throw err;
          });
        await Promise.all(
          Messages.map(async (message) => {
            const job = JSON.parse(message.Body ?? '{}') as {
              clickToken: string;
              orderId: string;
              valueMicros: number;
            };
            await client.conversions.confirm({
              click_token: job.clickToken,
              order_id: job.orderId,
              value_micros: job.valueMicros,
            });
          }),
        );
        if (Messages.length === 0) continue;
        await sqsClient.send(
          new DeleteMessageBatchCommand({
            QueueUrl: outbox.queueUrl,
            Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
          }),
        );
        deleted += Messages.length;
        // The last batch is deleted: the loops still long-polling an empty queue are cut short.
        if (deleted >= jobs) stop.abort();
      }
    };
    try {
      const loops = Math.max(1, Math.round(CONCURRENCY / 10));
      const rate = await timed(jobs, () =>
        withinLimit(
          Promise.all(Array.from({ length: loops }, consume)).then(() => undefined),
          `bare SQS consumer on ${kind}`,
          RUN_LIMIT_MS,
        ),
      );
      if ((await left()) !== 0) throw new Error(`messages left in the ${kind} queue after the bare consumer`);
      return rate;
    } finally {
      stop.abort();
      await client.close();
    }
  });
}

/** Jobs per second of the same Dispatcher on core's in-memory outbox: what the worker costs without SQS. */
async function memoryRun(jobs = JOBS): Promise<Rate> {
  return withWorld(startWorld, async (world, tokens) => {
    const outbox: Outbox = createMemoryOutbox();
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    try {
      for (const input of confirmInputs('m', jobs, tokens)) await outbox.confirm(input);
      const dispatcher = createDispatcher({
        outbox,
        client,
        concurrency: CONCURRENCY,
        batchSize: CONCURRENCY,
        pollIntervalMs: 1,
        pace: 'off',
      });
      const done = deliveredAll(dispatcher, jobs);
      const rate = await timed(jobs, async () => {
        dispatcher.start();
        await withinLimit(done, 'memory worker', RUN_LIMIT_MS);
      });
      await dispatcher.stop({ timeoutMs: 5_000 });
      return rate;
    } finally {
      await client.close();
      await outbox.close();
    }
  });
}

/** Jobs per second of a bare loop: the same POSTs, same client, same concurrency, no queue. */
async function bareRun(jobs = JOBS): Promise<Rate> {
  return withWorld(startWorld, async (world, tokens) => {
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    try {
      return await timed(jobs, () =>
        bareLoop(client, tokens, { jobs, concurrency: CONCURRENCY, limitMs: RUN_LIMIT_MS }),
      );
    } finally {
      await client.close();
    }
  });
}

/**
 * Milliseconds from the ReceiveMessage answer that brought each job to the start of its POST, for a
 * running worker with the defaults a user gets (batch 16, concurrency 4, a 20 s long poll) while pairs of
 * jobs trickle in.
 */
async function receiveToSendRun(kind: ServerKind): Promise<number[]> {
  return onSqs(kind, { waitTimeSeconds: LONG_POLL_SECONDS }, async ({ world, tokens, outbox, sqsClient }) => {
    const receivedAt = new Map<string, number>();
    sqsClient.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        if (context.commandName === 'ReceiveMessageCommand') {
          const at = Date.now();
          for (const m of (result.output as ReceiveMessageCommandOutput).Messages ?? [])
            receivedAt.set(decodeJobBody(m.Body ?? '').orderId, at);
        }
        return result;
      },
      { step: 'initialize', name: 'benchReceivedAt' },
    );
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    try {
      const dispatcher = createDispatcher({
        outbox,
        client,
        pollIntervalMs: 10,
        wake: () => () => outbox.interruptClaims(),
      });
      const waits: number[] = [];
      dispatcher.on('attempt', ({ job, attempt }) => {
        const at = receivedAt.get(job.orderId);
        if (at !== undefined) waits.push(attempt.startedAt - at);
      });
      const done = deliveredAll(dispatcher, TRICKLE_PAIRS * 2);
      dispatcher.start();
      for (let pair = 0; pair < TRICKLE_PAIRS; pair++) {
        await outbox.confirmMany(confirmInputs('t', 2, tokens, pair * 2));
        await new Promise((resolve) => setTimeout(resolve, TRICKLE_EVERY_MS));
      }
      await withinLimit(done, `trickle on ${kind}`, RUN_LIMIT_MS);
      await dispatcher.stop({ timeoutMs: 5_000 });
      return waits;
    } finally {
      await client.close();
    }
  });
}

/** Milliseconds `dispatcher.drain()` takes for 2 jobs, with a 20 s long poll. */
async function drainRun(kind: ServerKind): Promise<number> {
  return onSqs(kind, { waitTimeSeconds: LONG_POLL_SECONDS }, async ({ world, tokens, outbox, left }) => {
    await outbox.confirmMany(confirmInputs('d', 2, tokens));
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    try {
      const dispatcher = createDispatcher({ outbox, client });
      const t0 = performance.now();
      const summary = await withinLimit(dispatcher.drain(), `drain on ${kind}`, RUN_LIMIT_MS);
      const ms = performance.now() - t0;
      if (summary.delivered !== 2 || (await left()) !== 0) throw new Error(`drain on ${kind} left jobs`);
      return ms;
    } finally {
      await client.close();
    }
  });
}

const spread = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
const verdict = (ok: boolean) => (ok ? 'OK' : 'MISSED');

// One small untimed round each first: the AWS SDK loads most of its code on the first request, and the
// JIT warms up; neither belongs in the comparison.
const WARM_UP = Math.ceil(JOBS / 5);
type Contender = ServerKind | 'fauxqs-adaptive' | 'bare-sqs' | 'memory' | 'bare';
const runs: Record<Contender, (jobs?: number) => Promise<Rate>> = {
  emulator: (jobs) => sqsRun('emulator', jobs),
  fauxqs: (jobs) => sqsRun('fauxqs', jobs),
  'fauxqs-adaptive': (jobs) => sqsRun('fauxqs', jobs, 'adaptive'),
  'bare-sqs': (jobs) => bareSqsRun('fauxqs', jobs),
  memory: (jobs) => memoryRun(jobs),
  bare: (jobs) => bareRun(jobs),
};
const only = values.only?.split(',');
const contenders = (Object.keys(runs) as Contender[]).filter((c) => only === undefined || only.includes(c));
for (const c of contenders) await runs[c](WARM_UP);

// 1. Throughput: the contenders in ABBA order (forward, then backward), so noise hits them alike.
const rates = Object.fromEntries((Object.keys(runs) as Contender[]).map((c) => [c, [] as Rate[]])) as Record<
  Contender,
  Rate[]
>;
const started = Date.now();
for (let round = 0; round < ROUNDS && Date.now() - started < ROUNDS_LIMIT_MS; round++) {
  for (const c of round % 2 === 0 ? contenders : [...contenders].reverse()) rates[c].push(await runs[c]());
}
console.log(
  `sqs: ${JOBS} confirmations per run, concurrency ${CONCURRENCY}, sandbox ${values.sandbox}, ${rates[contenders[0] as Contender].length} ABBA rounds (median, spread; ratios: median of each round's)`,
);
const label: Record<Contender, string> = {
  emulator: 'worker on SQS (our emulator)  ',
  fauxqs: 'worker on SQS (fauxqs)        ',
  'fauxqs-adaptive': "  the same, pace 'adaptive'   ",
  'bare-sqs': 'bare SQS consumer (fauxqs)    ',
  memory: 'same Dispatcher, memory outbox',
  bare: 'bare loop (same client)       ',
};
const perSecond = (c: Contender) => rates[c].map((r) => r.jobsPerSecond);
const cpuPerJob = (c: Contender) => rates[c].map((r) => r.cpuUsPerJob);
for (const c of contenders)
  console.log(
    `  ${label[c]} ${median(perSecond(c)).toFixed(0).padStart(6)} jobs/s  (${spread(perSecond(c))}); this thread's CPU ${median(cpuPerJob(c)).toFixed(0).padStart(4)} µs/job (${spread(cpuPerJob(c))})`,
  );
/** The median of the ratios round by round: contenders of a round ran minutes apart at most. */
const ratio = (a: Contender, b: Contender) =>
  median(perSecond(a).map((x, i) => x / (perSecond(b)[i] as number)));
const ran = (c: Contender) => rates[c].length > 0;
for (const kind of KINDS)
  if (ran(kind) && ran('bare'))
    console.log(
      `  ratio worker on ${kind} / bare loop: ${ratio(kind, 'bare').toFixed(2)} (no queue: for scale)`,
    );
if (ran('fauxqs') && ran('bare-sqs')) {
  const anchor = ratio('fauxqs', 'bare-sqs');
  const cpu = median(cpuPerJob('fauxqs').map((x, i) => x / (cpuPerJob('bare-sqs')[i] as number)));
  console.log(
    `  ratio worker on fauxqs / bare SQS consumer: ${anchor.toFixed(2)} (target >= 0.8) ${verdict(anchor >= 0.8)}; CPU per job ${cpu.toFixed(2)}`,
  );
}
if (ran('fauxqs') && ran('fauxqs-adaptive')) {
  const paced = ratio('fauxqs-adaptive', 'fauxqs');
  console.log(
    `  ratio worker on fauxqs, pace 'adaptive' / 'off': ${paced.toFixed(2)} (target >= 0.95) ${verdict(paced >= 0.95)}`,
  );
}

// 2 and 3. Latency figures, servers alternating.
const waits: Record<ServerKind, number[]> = { emulator: [], fauxqs: [] };
const drains: Record<ServerKind, number[]> = { emulator: [], fauxqs: [] };
for (let round = 0; round < (values['no-latency'] ? 0 : 2); round++) {
  for (const kind of round % 2 === 0 ? KINDS : [...KINDS].reverse()) {
    waits[kind].push(...(await receiveToSendRun(kind)));
    drains[kind].push(await drainRun(kind), await drainRun(kind));
  }
}
if (!values['no-latency'])
  console.log(
    `receive → send (${TRICKLE_PAIRS} pairs every ${TRICKLE_EVERY_MS} ms, twice; batch 16, ${LONG_POLL_SECONDS} s long poll), and drain of 2 jobs (4 runs):`,
  );
for (const kind of values['no-latency'] ? [] : KINDS) {
  const p99 = quantile(waits[kind], 0.99);
  const drain = Math.max(...drains[kind]);
  console.log(
    `  ${kind.padEnd(8)} receive → send p50 ${quantile(waits[kind], 0.5).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${Math.max(...waits[kind]).toFixed(0)} ms (target p99 < 100) ${verdict(p99 < 100)}; drain of 2 jobs ${spread(drains[kind])} ms (target < 2000) ${verdict(drain < 2000)}`,
  );
}

/**
 * Benchmark: confirmations consumed from SQS and delivered per second by one worker (the core Dispatcher
 * on the SQS outbox: long-poll ReceiveMessage, visibility leases, batched DeleteMessageBatch) to the
 * sandbox of the ad service, side by side in one run with a bare loop doing the same number of POSTs with
 * the same client and the same concurrency (no queue at all). Target ratio worker / bare >= 0.8.
 *
 * SQS is the in-memory emulator of `packages/sqs/test`, served here on a real HTTP server on 127.0.0.1
 * in a worker thread (SQS runs elsewhere in real life; the tests put it behind nock instead, whose
 * interception costs milliseconds of CPU per request — more than what is measured) and spoken to by the
 * real AWS SDK, so every receive and delete is serialised, signed
 * and parsed as against AWS. Its latency is far below a real region's (~10–30 ms per call), which this
 * ratio does not model: it measures our per-message overhead. Messages are enqueued (confirmMany,
 * untimed) before each measured run. A third contender, the same Dispatcher on core's in-memory outbox,
 * separates the Dispatcher's own cost from what SQS adds.
 *
 *   node --conditions=@postback/source bench/sqs.ts [--jobs 2000] [--concurrency 50] [--rounds 3]
 */
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createClient } from '@postback/client';
import { createDispatcher, createMemoryOutbox, type Outbox } from '@postback/core';
import { startSandboxWorld } from '@postback/sandbox/testing';
import { createSqsOutbox } from '@postback/sqs';
import { withinLimit, withWorld } from './run-world.ts';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
  },
});
const JOBS = Number(values.jobs);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);
/** Each measured run must finish within this. */
const RUN_LIMIT_MS = 25_000;
/** The whole benchmark stops starting rounds after this. */
const BENCH_LIMIT_MS = 60_000;

/** The emulator in its worker thread, and a request/response channel to it. */
async function startEmulatorThread(): Promise<{
  endpoint: string;
  call(op: string, arg?: object): Promise<unknown>;
  close(): Promise<void>;
}> {
  const thread = new Worker(new URL('../packages/sqs/test/emulator-thread.ts', import.meta.url), {
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

/** Jobs per second of the worker on SQS. */
async function sqsRun(jobs = JOBS): Promise<number> {
  return withWorld(startSandboxWorld, async (world, tokens) => {
    const sqs = await startEmulatorThread();
    const deadLetterQueueUrl = (await sqs.call('createQueue', { name: 'bench-dlq.fifo' })) as string;
    const queueUrl = (await sqs.call('createQueue', { name: 'bench.fifo' })) as string;
    const sqsClient = new SQSClient({
      region: 'us-east-1',
      endpoint: sqs.endpoint,
      credentials: { accessKeyId: 'AKIAEXAMPLEBENCH', secretAccessKey: 'bench-secret' },
    });
    const outbox = createSqsOutbox({
      queueUrl,
      deadLetterQueueUrl,
      client: sqsClient,
      waitTimeSeconds: 1,
    });
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    try {
      const now = Date.now();
      const inputs = Array.from({ length: jobs }, (_, i) => ({
        orderId: `s-${i}`,
        valueMicros: 1_000,
        click: { token: tokens[i % tokens.length] as string, clickedAt: now },
      }));
      const sent = await outbox.confirmMany(inputs);
      if (!sent.every((r) => r.ok)) throw new Error('enqueue failed');
      const dispatcher = createDispatcher({
        outbox,
        client,
        concurrency: CONCURRENCY,
        batchSize: CONCURRENCY,
        pollIntervalMs: 1,
        wake: () => () => outbox.interruptClaims(),
      });
      let count = 0;
      const done = new Promise<void>((resolve) => {
        dispatcher.on('delivered', () => {
          count += 1;
          if (count === jobs) resolve();
        });
      });
      const t0 = performance.now();
      dispatcher.start();
      await withinLimit(done, 'SQS worker', RUN_LIMIT_MS);
      const seconds = (performance.now() - t0) / 1000;
      await dispatcher.stop({ timeoutMs: 5_000 });
      if ((await sqs.call('count', { url: queueUrl })) !== 0)
        throw new Error('messages left in the queue after delivery');
      if (process.env.SQS_BENCH_CALLS) {
        const calls = await Promise.all(
          ['ReceiveMessage', 'DeleteMessageBatch', 'ChangeMessageVisibility'].map((name) =>
            sqs.call('calls', { name }),
          ),
        );
        console.log(
          `  (SQS requests for ${jobs} jobs: receive ${calls[0]}, delete batch ${calls[1]}, visibility ${calls[2]})`,
        );
      }
      return count / seconds;
    } finally {
      await client.close();
      await outbox.close();
      sqsClient.destroy();
      await sqs.close();
    }
  });
}

/** Jobs per second of the same Dispatcher on core's in-memory outbox: what the worker costs without SQS. */
async function memoryRun(jobs = JOBS): Promise<number> {
  return withWorld(startSandboxWorld, async (world, tokens) => {
    const outbox: Outbox = createMemoryOutbox();
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    try {
      const now = Date.now();
      for (let i = 0; i < jobs; i++) {
        await outbox.confirm({
          orderId: `m-${i}`,
          valueMicros: 1_000,
          click: { token: tokens[i % tokens.length] as string, clickedAt: now },
        });
      }
      const dispatcher = createDispatcher({
        outbox,
        client,
        concurrency: CONCURRENCY,
        batchSize: CONCURRENCY,
        pollIntervalMs: 1,
      });
      let count = 0;
      const done = new Promise<void>((resolve) => {
        dispatcher.on('delivered', () => {
          count += 1;
          if (count === jobs) resolve();
        });
      });
      const t0 = performance.now();
      dispatcher.start();
      await withinLimit(done, 'memory worker', RUN_LIMIT_MS);
      const seconds = (performance.now() - t0) / 1000;
      await dispatcher.stop({ timeoutMs: 5_000 });
      return count / seconds;
    } finally {
      await client.close();
      await outbox.close();
    }
  });
}

/** Jobs per second of a bare loop: the same POSTs, same client, same concurrency, no queue. */
async function bareRun(jobs = JOBS): Promise<number> {
  return withWorld(startSandboxWorld, async (world, tokens) => {
    const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey });
    try {
      let next = 0;
      let delivered = 0;
      const t0 = performance.now();
      const loop = async () => {
        while (next < jobs) {
          const i = next++;
          await client.conversions.confirm({
            click_token: tokens[i % tokens.length] as string,
            order_id: `b-${i}`,
            value_micros: 1_000,
          });
          delivered += 1;
        }
      };
      await withinLimit(Promise.all(Array.from({ length: CONCURRENCY }, loop)), 'bare loop', RUN_LIMIT_MS);
      return delivered / ((performance.now() - t0) / 1000);
    } finally {
      await client.close();
    }
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

// The machine is shared: contenders run in alternating rounds so noise hits both alike; medians compared.
const rates = { sqs: [] as number[], memory: [] as number[], bare: [] as number[] };
// One small untimed round each first: the AWS SDK loads most of its code on the first request, and the
// JIT warms up; neither belongs in the comparison.
await sqsRun(Math.ceil(JOBS / 5));
await memoryRun(Math.ceil(JOBS / 5));
await bareRun(Math.ceil(JOBS / 5));
const started = Date.now();
for (let round = 0; round < ROUNDS && Date.now() - started < BENCH_LIMIT_MS; round++) {
  rates.sqs.push(await sqsRun());
  rates.memory.push(await memoryRun());
  rates.bare.push(await bareRun());
}
const ratio = median(rates.sqs) / median(rates.bare);
console.log(
  `sqs: ${JOBS} confirmations per run, concurrency ${CONCURRENCY}, ${rates.sqs.length} alternating rounds (median)`,
);
console.log(
  `  worker on SQS (emulator via AWS SDK) ${median(rates.sqs).toFixed(0).padStart(6)} jobs/s  (rounds: ${rates.sqs.map((r) => r.toFixed(0)).join(', ')})`,
);
console.log(
  `  same Dispatcher, memory outbox       ${median(rates.memory).toFixed(0).padStart(6)} jobs/s  (rounds: ${rates.memory.map((r) => r.toFixed(0)).join(', ')})`,
);
console.log(
  `  bare loop (same client)              ${median(rates.bare).toFixed(0).padStart(6)} jobs/s  (rounds: ${rates.bare.map((r) => r.toFixed(0)).join(', ')})`,
);
console.log(
  `  ratio worker on SQS / bare loop: ${ratio.toFixed(2)} (target >= 0.8) ${ratio >= 0.8 ? 'OK' : 'MISSED'}`,
);
console.log(
  `  for context, memory-outbox Dispatcher / bare loop: ${(median(rates.memory) / median(rates.bare)).toFixed(2)}; worker on SQS / memory-outbox Dispatcher: ${(median(rates.sqs) / median(rates.memory)).toFixed(2)}`,
);

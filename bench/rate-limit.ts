/**
 * Benchmark: draining a backlog against a service that limits a key to N requests a second. The sandbox
 * (in a child process, a fresh one per run) has its rate-limit fault on (`rate_limit_per_s: N`: a request
 * over N in any sliding second gets 429 with `Retry-After`, the whole seconds until the key's window frees).
 * Side by side, in AB/BA order round by round, each run with its own key and the same number of jobs and
 * the same concurrency:
 *  - ours: the Dispatcher (memory outbox, `pace: 'off'` as `postback worker`): a 429 pauses the key for its
 *    `Retry-After`, then one probe, then a rate learned from it;
 *  - a loop that only honours `Retry-After` per job: the job that met a 429 waits, every other job keeps
 *    being sent.
 * Printed, from one run: 429s received per delivered job (target: ours <= 0.05) and the time to drain the
 * backlog, as ours / the loop's.
 *
 *   node --conditions=@postback/source bench/rate-limit.ts [--rate 50] [--jobs 500] [--concurrency 4]
 *     [--rounds 1]
 */
import { parseArgs } from 'node:util';
import { createClient } from '@postback/client';
import { type ConversionsClient, createDispatcher, createMemoryOutbox } from '@postback/core';
import type { SandboxWorld } from '@postback/sandbox/testing';
import { deliveredAll, median, withinLimit, withWorld } from './run-world.ts';
import { startChildSandboxWorld } from './sandbox-process.ts';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '50' },
    jobs: { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '1' },
  },
});
const RATE = Number(values.rate);
const JOBS = Number(values.jobs);
const CONCURRENCY = Number(values.concurrency);
const ROUNDS = Number(values.rounds);
/** A run must drain within this (the ideal is JOBS / RATE seconds). */
const RUN_LIMIT_MS = Math.max(60_000, (4 * JOBS * 1000) / RATE);

interface Run {
  name: 'ours' | 'loop';
  seconds: number;
  delivered: number;
  limited: number;
}

/** The world's client, counting the 429s it receives. */
function countingClient(world: SandboxWorld) {
  const client = createClient({ baseUrl: world.url, apiKey: world.conversionsKey, timeout: 10_000 });
  const counts = { limited: 0 };
  const conversions: ConversionsClient['conversions'] = {
    async confirm(body, options) {
      try {
        return await client.conversions.confirm(body, options);
      } catch (error) {
        if ((error as { status?: unknown }).status === 429) counts.limited += 1;
        throw error;
      }
    },
    refund: (body, options) => client.conversions.refund(body, options),
  };
  return { client, conversions, counts };
}

/** Confirmations of the world's clicks, one per job. */
const orders = (tokens: string[], prefix: string) =>
  Array.from({ length: JOBS }, (_, i) => ({
    orderId: `${prefix}-${i}`,
    token: tokens[i % tokens.length] as string,
  }));

async function ours(world: SandboxWorld, tokens: string[]): Promise<Run> {
  const { client, conversions, counts } = countingClient(world);
  const outbox = createMemoryOutbox();
  const clickedAt = Date.now() - 60_000;
  for (const order of orders(tokens, 'ours')) {
    await outbox.confirm({
      orderId: order.orderId,
      valueMicros: 1_000,
      click: { token: order.token, clickedAt },
    });
  }
  const dispatcher = createDispatcher({
    outbox,
    client: { conversions },
    concurrency: CONCURRENCY,
    pace: 'off',
  });
  let delivered = 0;
  dispatcher.on('delivered', () => {
    delivered += 1;
  });
  const done = deliveredAll(dispatcher, JOBS);
  dispatcher.on('dead', ({ reason }) => console.error(`ours: a job went dead: ${reason}`));
  const started = performance.now();
  dispatcher.start();
  try {
    await withinLimit(done, 'ours', RUN_LIMIT_MS);
  } finally {
    await dispatcher.stop({ timeoutMs: 1_000 });
    await client.close();
  }
  return { name: 'ours', seconds: (performance.now() - started) / 1000, delivered, limited: counts.limited };
}

/** `CONCURRENCY` senders over one queue; a job that met a 429 waits its `Retry-After`, the others go on. */
async function loop(world: SandboxWorld, tokens: string[]): Promise<Run> {
  const { client, conversions, counts } = countingClient(world);
  const queue = orders(tokens, 'loop').map((order) => ({ ...order, notBefore: 0 }));
  let delivered = 0;
  const signal = new AbortController().signal;
  const sender = async () => {
    while (queue.length > 0) {
      const now = Date.now();
      const at = queue.findIndex((job) => job.notBefore <= now);
      if (at < 0) {
        const next = Math.min(...queue.map((job) => job.notBefore));
        await new Promise((resolve) => setTimeout(resolve, Math.max(1, next - now)));
        continue;
      }
      const [job] = queue.splice(at, 1) as [(typeof queue)[number]];
      try {
        const body = { click_token: job.token, order_id: job.orderId, value_micros: 1_000 };
        await conversions.confirm(body, { signal });
        delivered += 1;
      } catch (error) {
        const { status, retryAfterMs } = error as { status?: number; retryAfterMs?: number | null };
        if (status !== 429) throw error;
        job.notBefore = Date.now() + (retryAfterMs ?? 1_000);
        queue.push(job);
      }
    }
  };
  const started = performance.now();
  try {
    await withinLimit(
      Promise.all(Array.from({ length: CONCURRENCY }, sender)),
      'the Retry-After loop',
      RUN_LIMIT_MS,
    );
  } finally {
    await client.close();
  }
  return { name: 'loop', seconds: (performance.now() - started) / 1000, delivered, limited: counts.limited };
}

/** One run of `contender` against a fresh sandbox (its own key) limiting it to `RATE` a second. */
function run(contender: typeof ours): Promise<Run> {
  return withWorld(startChildSandboxWorld, async (world, tokens) => {
    await world.setFaults({ rate_limit_per_s: RATE });
    return contender(world, tokens);
  });
}

async function main(): Promise<void> {
  console.log(
    `rate limit: the sandbox limits a key to ${RATE} requests/s (429 + Retry-After); ${JOBS} jobs, concurrency ` +
      `${CONCURRENCY}; ours (Dispatcher) vs a loop honouring Retry-After per job, ${ROUNDS} round(s) AB/BA; ` +
      `ideal drain ${(JOBS / RATE).toFixed(1)} s; Node ${process.version}`,
  );
  const runs: Run[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const contender of round % 2 === 0 ? [ours, loop] : [loop, ours]) {
      const result = await run(contender);
      runs.push(result);
      console.log(
        `  ${result.name.padEnd(4)} ${result.delivered} delivered in ${result.seconds.toFixed(2)} s, ` +
          `${result.limited} 429s (${(result.limited / result.delivered).toFixed(3)} per delivered job)`,
      );
    }
  }
  const of = (name: Run['name']) => runs.filter((r) => r.name === name);
  const perJob = (rs: Run[]) => median(rs.map((r) => r.limited / r.delivered));
  const seconds = (rs: Run[]) => median(rs.map((r) => r.seconds));
  const oursPerJob = perJob(of('ours'));
  console.log(
    `  429s per delivered job: ours ${oursPerJob.toFixed(3)} (target <= 0.05) ${oursPerJob <= 0.05 ? 'OK' : 'MISSED'}, ` +
      `loop ${perJob(of('loop')).toFixed(3)}`,
  );
  console.log(
    `  time to drain: ours ${seconds(of('ours')).toFixed(2)} s, loop ${seconds(of('loop')).toFixed(2)} s, ` +
      `ours / loop ${(seconds(of('ours')) / seconds(of('loop'))).toFixed(2)}`,
  );
}

await main();

/**
 * Benchmark: does one advertiser's backlog hold back the others? One account has a backlog of 100,000
 * confirmations; 19 others each enqueue a fresh one every `--interval` ms while a Dispatcher drains it.
 * Measured for every trickle job: how many claims began after it was enqueued up to the one that took it
 * (claim rounds), and the time from enqueue to delivery. Two runs side by side, the same in all but the
 * accounts: "accounts" (each job carries its account, so claims take turns across accounts) and "one
 * queue" (every job without an account: the single-queue order, first due first). Target: the trickle's
 * p99 within 2 claim rounds with accounts. The one-queue run is bounded by `--limit-s`; trickle jobs it had
 * not delivered by then count as never (their delay is at least the run's length).
 *
 * The service is a bare `node:http` server on loopback answering every confirmation with the success
 * body (the figure is about claim order, not HTTP). Bounded: fixed counts and a time limit per run.
 *
 * The outbox is SQLite: the memory outbox is for tests and small demos (a claim looks at every job it holds,
 * so a 100,000-job backlog would make this run take tens of minutes).
 *
 *   node --conditions=@postback/source bench/account-fairness.ts [--backlog 100000]
 *     [--accounts 20] [--interval 25] [--limit-s 60]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from '@postback/client';
import { createDispatcher, type Job, type Outbox } from '@postback/core';
import type { ClaimOptions } from '@postback/core/store';
import { createSqliteOutbox } from '@postback/sqlite';
import { quantile } from './run-world.ts';

const { values } = parseArgs({
  options: {
    backlog: { type: 'string', default: '100000' },
    accounts: { type: 'string', default: '20' },
    interval: { type: 'string', default: '50' },
    'limit-s': { type: 'string', default: '60' },
  },
});
const BACKLOG = Number(values.backlog);
const TRICKLE_ACCOUNTS = Number(values.accounts) - 1;
const INTERVAL_MS = Number(values.interval);
const LIMIT_MS = Number(values['limit-s']) * 1_000;
/** Trickle rounds: one job per trickle account each round, while the backlog still has a third left. */
const TRICKLE_ROUNDS = 200;
const BATCH_SIZE = 16;

type Mode = 'accounts' | 'one queue';

interface TrickleJob {
  enqueuedAt: number;
  claimsBefore: number;
  rounds: number | null;
  delayMs: number | null;
}

interface RunResult {
  mode: Mode;
  trickle: TrickleJob[];
  claims: number;
  backlogDelivered: number;
  seconds: number;
}

async function startService(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          conversion_id: `cv_${String(body.order_id)}`,
          order_id: body.order_id,
          campaign_id: 'cmp_bench',
          value_micros: body.value_micros,
          status: 'confirmed',
          created_at: new Date().toISOString(),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function openStore(dir: string, mode: Mode): Outbox {
  return createSqliteOutbox({ filename: join(dir, `${mode.replace(' ', '-')}.db`) });
}

const click = (i: number) => ({ token: `tok_${i}_bench`, clickedAt: Date.now() - 60_000 });

async function run(mode: Mode, serviceUrl: string, dir: string): Promise<RunResult> {
  const store = openStore(dir, mode);
  // The backlog, enqueued 64 at a time (the SQLite outbox commits concurrent enqueues together).
  for (let i = 0; i < BACKLOG; i += 64) {
    const batch = [];
    for (let j = i; j < Math.min(BACKLOG, i + 64); j++) {
      const account = mode === 'accounts' ? { account: 'big' } : {};
      batch.push(store.confirm({ orderId: `big_${j}`, valueMicros: 1_000_000, click: click(j), ...account }));
    }
    await Promise.all(batch);
  }

  // Count the claims as they begin; note, for each trickle job a claim returns, the rounds it waited.
  let claims = 0;
  const trickle = new Map<string, TrickleJob>();
  const claim = async (options: ClaimOptions): Promise<Job[]> => {
    claims += 1;
    const index = claims;
    const jobs = await store.claim(options);
    for (const job of jobs) {
      const entry = trickle.get(job.orderId);
      if (entry !== undefined && entry.rounds === null) entry.rounds = index - entry.claimsBefore;
    }
    return jobs;
  };
  const outbox = new Proxy(store, {
    get(target, property) {
      if (property === 'claim') return claim;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

  const client = createClient({ baseUrl: serviceUrl, apiKey: 'pbsk_bench_0000000000000000' });
  const dispatcher = createDispatcher({ outbox, client, batchSize: BATCH_SIZE, concurrency: 8 });
  let backlogDelivered = 0;
  let trickleDelivered = 0;
  dispatcher.on('delivered', ({ job }) => {
    const entry = trickle.get(job.orderId);
    if (entry === undefined) backlogDelivered += 1;
    else {
      entry.delayMs = performance.now() - entry.enqueuedAt;
      trickleDelivered += 1;
    }
  });
  const started = performance.now();
  dispatcher.start();

  // The trickle: one fresh job per trickle account every INTERVAL_MS, while the backlog is still large.
  let enqueued = 0;
  for (let round = 0; round < TRICKLE_ROUNDS && backlogDelivered < (BACKLOG * 2) / 3; round++) {
    for (let a = 1; a <= TRICKLE_ACCOUNTS; a++) {
      const orderId = `t${a}_${round}`;
      trickle.set(orderId, {
        enqueuedAt: performance.now(),
        claimsBefore: claims,
        rounds: null,
        delayMs: null,
      });
      const account = mode === 'accounts' ? { account: `shop-${String(a).padStart(2, '0')}` } : {};
      await store.confirm({ orderId, valueMicros: 1_000_000, click: click(1e9 + enqueued), ...account });
      enqueued += 1;
    }
    dispatcher.wake();
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS));
  }
  // Until every trickle job is delivered, bounded by the time limit.
  while (trickleDelivered < enqueued && performance.now() - started < LIMIT_MS) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const seconds = (performance.now() - started) / 1_000;
  await dispatcher.stop({ timeoutMs: 5_000 });
  await client.close();
  await store.close();
  return { mode, trickle: [...trickle.values()], claims, backlogDelivered, seconds };
}

function summarize(result: RunResult) {
  const never = result.trickle.filter((t) => t.delayMs === null).length;
  // A job never delivered waited at least the whole run: count it as that (and as no claim round at all).
  const delays = result.trickle.map((t) => t.delayMs ?? result.seconds * 1_000);
  const rounds = result.trickle.map((t) => t.rounds ?? Number.POSITIVE_INFINITY);
  return {
    mode: result.mode,
    trickleJobs: result.trickle.length,
    neverDelivered: never,
    roundsP50: quantile(rounds, 0.5),
    roundsP99: quantile(rounds, 0.99),
    roundsMax: quantile(rounds, 1),
    delayMsP50: Math.round(quantile(delays, 0.5)),
    delayMsP99: Math.round(quantile(delays, 0.99)),
    claims: result.claims,
    backlogDelivered: result.backlogDelivered,
    seconds: Number(result.seconds.toFixed(1)),
  };
}

const dir = mkdtempSync(join(tmpdir(), 'pb-fairness-'));
const service = await startService();
try {
  console.log(
    `account fairness: sqlite outbox, backlog ${BACKLOG} in one account, ${TRICKLE_ACCOUNTS} trickle ` +
      `accounts (one job each every ${INTERVAL_MS} ms), claims of ${BATCH_SIZE}`,
  );
  const fair = summarize(await run('accounts', service.url, dir));
  const single = summarize(await run('one queue', service.url, dir));
  console.table([fair, single]);
  const ratio = single.delayMsP99 / Math.max(1, fair.delayMsP99);
  console.log(
    `trickle delivery delay p99: accounts ${fair.delayMsP99} ms vs one queue ${single.delayMsP99} ms (×${ratio.toFixed(1)})`,
  );
  console.log(
    `trickle claim rounds p99 with accounts: ${fair.roundsP99} (max ${fair.roundsMax}) — target ≤ 2: ${
      fair.roundsP99 <= 2 && fair.neverDelivered === 0 ? 'met' : 'NOT met'
    }`,
  );
} finally {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Four worker processes on one Postgres queue deliver 10,000 confirmations to a local sandbox of the ad
 * service while workers are killed at random with SIGKILL and restarted, and the shop refunds every
 * twentieth order meanwhile (whatever state its confirmation is in): every order is confirmed unless its
 * refund cancelled it first, none is charged twice (the sandbox counts), every refund of a sent
 * confirmation is reversed after it, and nothing is left inflight.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresOutbox, type PostgresOutbox } from '../src/index.ts';
import { freshSchema, TEST_PG_URL, testPool } from './pg-test-db.ts';

const JOBS = Number(process.env.POSTBACK_MULTI_WORKER_JOBS ?? 10_000);
const WORKERS = 4;
const MIN_KILLS = 4;
const RUN_LIMIT_MS = 150_000;
const WORKER_SCRIPT = fileURLToPath(new URL('./fixtures/worker.ts', import.meta.url));

interface WorkerProcess {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  ready: Promise<void>;
  stderr: string[];
}

function spawnWorker(schema: string, world: SandboxWorld): WorkerProcess {
  const child = spawn(
    process.execPath,
    ['--conditions=@postback/source', WORKER_SCRIPT, TEST_PG_URL, schema, world.url],
    {
      env: { PATH: process.env.PATH ?? '', POSTBACK_API_KEY: world.conversionsKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const stderr: string[] = [];
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      if (chunk.includes('ready')) resolve();
    });
    void exited.then(() => reject(new Error(`worker exited before ready: ${stderr.join('')}`)));
  });
  ready.catch(() => {});
  return { child, exited, ready, stderr };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let world: SandboxWorld | undefined;
let dropSchema: (() => Promise<void>) | undefined;
let outbox: PostgresOutbox | undefined;
const workers: WorkerProcess[] = [];
const pool = testPool(4);

afterEach(async () => {
  for (const w of workers.splice(0)) {
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await w.exited;
  }
  await outbox?.close();
  await world?.close();
  await dropSchema?.();
  await pool.end();
});

describe('four worker processes on one Postgres queue, killed at random', () => {
  it(`deliver ${JOBS.toLocaleString('en-US')} confirmations and the refunds racing them, each charged once, none left inflight`, async () => {
    const started = Date.now();
    world = await startSandboxWorld();
    const w = world;
    const fresh = await freshSchema(pool, 'pbmw');
    dropSchema = fresh.drop;
    const schema = fresh.schema;
    outbox = createPostgresOutbox({ pool, schema });
    const shop = outbox;

    const clicks = await w.clicks(JOBS);
    for (let i = 0; i < JOBS; i += 200) {
      await Promise.all(
        clicks
          .slice(i, i + 200)
          .map((click, k) => shop.confirm({ orderId: `mw-${i + k}`, valueMicros: 1_000 + i + k, click })),
      );
    }
    const setupMs = Date.now() - started;

    const slots: WorkerProcess[] = [];
    for (let i = 0; i < WORKERS; i += 1) {
      const proc = spawnWorker(schema, w);
      workers.push(proc);
      slots.push(proc);
    }
    await Promise.all(slots.map((s) => s.ready));

    // Refunds race the workers: an order still pending is cancelled, a sent (or in-flight) one reversed.
    const refundEvery = 20;
    const reversedExpected = new Set<string>();
    const cancelled = new Set<string>();
    // Every twentieth order, in random order: early picks of late orders find their confirmation still
    // pending (cancelled), others find it sent or in flight (reversed after it).
    const toRefund = Array.from({ length: JOBS / refundEvery }, (_, k) => k * refundEvery).sort(
      () => Math.random() - 0.5,
    );
    let refundCursor = 0;
    const refundSome = async (count: number) => {
      const batch = toRefund.slice(refundCursor, refundCursor + count);
      refundCursor += batch.length;
      const outcomes = await Promise.all(batch.map((i) => shop.refund({ orderId: `mw-${i}` })));
      outcomes.forEach((outcome, k) => {
        const orderId = `mw-${batch[k]}`;
        if (outcome.outcome === 'enqueued') reversedExpected.add(orderId);
        else if (outcome.outcome === 'cancelled') cancelled.add(orderId);
        else throw new Error(`unexpected refund outcome ${outcome.outcome} for ${orderId}`);
      });
    };
    const settled = async () => {
      const { counts } = await shop.stats(Date.now());
      return refundCursor >= toRefund.length && counts.pending === 0 && counts.inflight === 0;
    };

    // Kill a random worker every 0.4-1.2 s while jobs remain, restarting it at once.
    let kills = 0;
    while (!(await settled())) {
      expect(Date.now() - started, 'run limit').toBeLessThan(RUN_LIMIT_MS);
      await refundSome(60);
      await sleep(400 + Math.random() * 800);
      if (await settled()) break;
      const victim = Math.floor(Math.random() * WORKERS);
      const proc = slots[victim]!;
      proc.child.kill('SIGKILL');
      expect((await proc.exited).signal).toBe('SIGKILL');
      kills += 1;
      const next = spawnWorker(schema, w);
      workers.push(next);
      slots[victim] = next;
      await next.ready;
    }
    // Keep killing until the minimum is reached even if delivery was quick (jobs are all delivered, so
    // these kills exercise shutdown-free exits only).
    for (; kills < MIN_KILLS; kills += 1) {
      const proc = slots[kills % WORKERS]!;
      proc.child.kill('SIGKILL');
      await proc.exited;
    }
    for (const proc of slots) {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGTERM');
      await proc.exited;
    }

    const confirmed = JOBS - cancelled.size;
    expect(reversedExpected.size + cancelled.size).toBe(JOBS / refundEvery);
    const stats = await shop.stats(Date.now());
    expect(stats.counts).toEqual({
      pending: 0,
      inflight: 0,
      delivered: confirmed + reversedExpected.size,
      dead: 0,
      expired: 0,
      cancelled: cancelled.size,
      unmatched: 0,
    });
    const seen = await w.conversions();
    expect(seen.conversions).toHaveLength(confirmed);
    const orders = new Set(seen.conversions.map((c) => c.order_id));
    expect(orders.size).toBe(confirmed);
    // A confirmation cancelled by its refund never reached the service.
    expect([...cancelled].filter((id) => orders.has(id))).toEqual([]);
    const reversed = new Set(seen.conversions.filter((c) => c.state === 'reversed').map((c) => c.order_id));
    expect(reversed).toEqual(reversedExpected);
    // Charged once per order kept, whatever was re-sent after a kill.
    expect(await w.spendMicros()).toBe((confirmed - reversedExpected.size) * w.bidMicros);
    // Every job sent recorded the campaign: the confirm from the service's answer, the refund from its confirm.
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM "${schema}".jobs WHERE state = 'delivered' AND campaign_id = $1`,
      [w.campaignId],
    );
    expect(rows[0].n).toBe(confirmed + reversedExpected.size);
    expect(kills).toBeGreaterThanOrEqual(MIN_KILLS);
    console.log(
      `multi-worker: ${JOBS} jobs, ${reversedExpected.size} reversals, ${cancelled.size} cancelled by refund, ` +
        `${WORKERS} workers, ${kills} SIGKILLs, ${seen.counts.requests} requests ` +
        `(${seen.counts.duplicates} duplicate re-sends after kills), setup ${(setupMs / 1000).toFixed(1)} s, ` +
        `total ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  }, 180_000);
});

/**
 * Chaos run: 5,000 confirmations and 500 refunds through the sandbox with 30% 5xx, 5% connection resets
 * (some after the service applied the request), and bursts of 429 with Retry-After (which pause sending), while the worker
 * process (SQLite outbox) is killed with SIGKILL at random at least 5 times. At the end the service shows
 * every confirmation exactly once, every refund applied, nothing sent late, and the outbox lost nothing.
 */

import {
  type SandboxFaults as Faults,
  type SandboxWorld,
  startSandboxWorld,
} from '@postback/sandbox/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createOutboxFile, type OutboxFile } from './helpers/outbox-file.ts';
import { chaosSeed, seeded } from './helpers/seeded-random.ts';
import { type PostbackProcess, spawnPostback, stopProcess, waitUntil } from './helpers/worker-process.ts';

const CONFIRMS = 5_000;
const REFUNDS = 500;
const KILLS = 5;
/** The whole run must finish within this (the suite's own bound; typically much less). */
const RUN_LIMIT_MS = 150_000;

const CHAOS: Faults = { error_rate: 0.3, error_status: 503, reset_rate: 0.05, reset_after_rate: 0.02 };
const RATE_LIMIT_BURST: Faults = { error_rate: 0.9, error_status: 429, retry_after_s: 1 };

let world: SandboxWorld | undefined;
let db: OutboxFile | undefined;
const processes: PostbackProcess[] = [];

afterEach(async () => {
  for (const proc of processes.splice(0)) await stopProcess(proc);
  await world?.clearFaults().catch(() => {});
  await world?.close();
  await db?.cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('chaos: faults at the service and a worker killed again and again', () => {
  it('delivers 5,000 confirmations exactly once and applies 500 refunds, never late, losing nothing', async () => {
    const started = Date.now();
    const seed = chaosSeed();
    const random = seeded(seed);
    // The service answers with fields and enum values the client does not know: delivery must not care.
    world = await startSandboxWorld({ sandbox: { variants: ['extra-fields', 'unknown-enums'] } });
    const w = world;
    db = createOutboxFile('postback-chaos-');
    const outbox = db.outbox;
    const file = db.file;

    const clicks = await w.clicks(CONFIRMS);
    const orderOf = (i: number) => `chaos-${i}`;
    for (const [i, click] of clicks.entries()) {
      await outbox.confirm({
        orderId: orderOf(i),
        valueMicros: 1_000 + i,
        click: { token: click.token, clickedAt: click.clickedAt },
      });
    }
    await w.setFaults(CHAOS);

    const spawnWorker = () => {
      const proc = spawnPostback(
        [
          'worker',
          '--db',
          file,
          '--base-url',
          w.url,
          '--concurrency',
          '50',
          '--lease-ms',
          '2000',
          '--poll-ms',
          '25',
          '--backoff-base-ms',
          '20',
          '--backoff-max-ms',
          '400',
          '--backoff-min-ms',
          '10',
          '--request-timeout-ms',
          '2000',
          '--shutdown-timeout-ms',
          '5000',
          '--log',
          'json',
        ],
        { POSTBACK_API_KEY: w.conversionsKey },
      );
      processes.push(proc);
      return proc;
    };

    // Refunds are enqueued for orders whose confirmation is delivered (a refund of an unsent order would
    // cancel it instead), by the test process on its own connection while the worker runs.
    const refunded = new Set<number>();
    let refundCursor = 0;
    const enqueueRefunds = async () => {
      while (refunded.size < REFUNDS && refundCursor < CONFIRMS) {
        const i = refundCursor;
        const [confirm] = await outbox.getByOrder(orderOf(i));
        if (confirm?.state !== 'delivered') return;
        refundCursor += 10; // every tenth order is refunded
        const result = await outbox.refund({ orderId: orderOf(i) });
        expect(result.outcome).toBe('enqueued');
        refunded.add(i);
      }
    };

    let kills = 0;
    let current = spawnWorker();
    // One 429 burst while the first worker has the whole backlog before it: it must pause sending (asserted
    // at the end). The later bursts fall at random moments and may meet a worker starting or being killed.
    await current.waitForLine(/"event":"worker.started"/, 20_000);
    await w.setFaults(RATE_LIMIT_BURST);
    await current.waitForLine(/"event":"paused".*"rate-limited"|"rate-limited".*"event":"paused"/, 15_000);
    await w.setFaults(CHAOS);
    let nextBurstAt = Date.now() + 4_000;
    // Kill at random moments until KILLS kills happened; then let the last worker finish.
    while (kills < KILLS) {
      // Each worker is killed at a random moment of its working life (counted from its start).
      await current.waitForLine(/"event":"worker.started"/, 20_000);
      const lifetime = 1_000 + random() * 4_000;
      const until = Date.now() + lifetime;
      while (Date.now() < until) {
        await enqueueRefunds();
        if (Date.now() >= nextBurstAt) {
          await w.setFaults(RATE_LIMIT_BURST);
          await sleep(700);
          await w.setFaults(CHAOS);
          nextBurstAt = Date.now() + 5_000 + random() * 3_000;
        }
        await sleep(100);
      }
      current.child.kill('SIGKILL');
      expect((await current.exited).signal).toBe('SIGKILL');
      kills += 1;
      current = spawnWorker();
      expect(Date.now() - started).toBeLessThan(RUN_LIMIT_MS);
    }

    await waitUntil(
      async () => {
        await enqueueRefunds();
        const counts = (await outbox.stats(Date.now())).counts;
        return refunded.size === REFUNDS && counts.delivered === CONFIRMS + REFUNDS;
      },
      RUN_LIMIT_MS - (Date.now() - started),
      250,
    );
    await w.clearFaults();
    await current.waitForLine(/"event":"worker.started"/, 20_000);
    current.child.kill('SIGTERM');
    expect((await current.exited).code).toBe(0);

    const counts = (await outbox.stats(Date.now())).counts;
    expect(counts).toEqual({
      pending: 0,
      inflight: 0,
      delivered: CONFIRMS + REFUNDS,
      dead: 0,
      expired: 0,
      cancelled: 0,
      unmatched: 0,
    });
    expect(kills).toBeGreaterThanOrEqual(KILLS);

    const seen = await w.conversions();
    expect(seen.conversions).toHaveLength(CONFIRMS);
    expect(new Set(seen.conversions.map((c) => c.order_id)).size).toBe(CONFIRMS);
    const reversed = seen.conversions
      .filter((c) => c.state === 'reversed')
      .map((c) => Number(c.order_id.slice('chaos-'.length)));
    expect(new Set(reversed)).toEqual(refunded);
    expect(seen.counts.late).toBe(0);
    // Charged once per order, given back once per reversal.
    expect(await w.spendMicros()).toBe((CONFIRMS - REFUNDS) * w.bidMicros);
    // The faults really happened: the workers' logs show durable retries after 5xx and dropped
    // connections, and the 429 bursts paused sending (a 429 slows the sender: no job's retry).
    const lines = processes.flatMap((proc) => proc.stderr);
    const retried = lines
      .filter((line) => line.includes('"event":"retried"'))
      .map((line) => JSON.parse(line) as { status: number | null });
    const statuses = new Set(retried.map((r) => r.status));
    expect(statuses).toContain(503);
    expect(statuses).toContain(null);
    expect(statuses).not.toContain(429);
    const rateLimited = lines
      .filter((line) => line.includes('"event":"paused"'))
      .map((line) => JSON.parse(line) as { status: number | null; cause: string });
    expect(rateLimited).toContainEqual(expect.objectContaining({ status: 429, cause: 'rate-limited' }));
    console.log(
      `chaos: seed ${seed}, ${kills} kills, ${seen.counts.requests} confirmation requests (${seen.counts.duplicates} duplicates), ${retried.length} durable retries, ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  }, 180_000);
});

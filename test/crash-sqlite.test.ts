/**
 * Crash safety of the SQLite outbox with the real `postback worker` process: killed with SIGKILL while
 * sends are in flight, restarted, and every job is delivered, no order is charged twice, nothing is left
 * inflight.
 */

import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createOutboxFile, type OutboxFile } from './helpers/outbox-file.ts';
import { type PostbackProcess, spawnPostback, stopProcess, waitUntil } from './helpers/worker-process.ts';

const JOBS = 300;

let world: SandboxWorld | undefined;
let db: OutboxFile | undefined;
const processes: PostbackProcess[] = [];

afterEach(async () => {
  for (const proc of processes.splice(0)) await stopProcess(proc);
  await world?.close();
  await db?.cleanup();
});

function worker(w: SandboxWorld, file: string): PostbackProcess {
  const proc = spawnPostback(
    [
      'worker',
      '--db',
      file,
      '--base-url',
      w.url,
      '--concurrency',
      '25',
      '--lease-ms',
      '1500',
      '--poll-ms',
      '50',
      '--backoff-base-ms',
      '50',
      '--backoff-max-ms',
      '300',
      '--backoff-min-ms',
      '10',
      '--shutdown-timeout-ms',
      '5000',
      '--log',
      'json',
    ],
    { POSTBACK_API_KEY: w.conversionsKey },
  );
  processes.push(proc);
  return proc;
}

describe('a worker killed with SIGKILL in the middle of sending', () => {
  it('delivers every job after a restart, charges no order twice and leaves nothing inflight', async () => {
    world = await startSandboxWorld();
    db = createOutboxFile('postback-crash-');
    const clicks = await world.clicks(JOBS);
    for (const [i, click] of clicks.entries()) {
      await db.outbox.confirm({
        orderId: `crash-${i}`,
        valueMicros: 10_000 + i,
        click: { token: click.token, clickedAt: click.clickedAt },
      });
    }
    // Slow answers keep sends in flight at the moment of the kill.
    await world.setFaults({ latency_ms: 300 });

    const first = worker(world, db.file);
    await first.waitForLine(/"event":"worker.started"/, 15_000);
    await waitUntil(async () => (await world?.conversions())!.conversions.length >= 40, 20_000);
    const inflightAtKill = (await db.counts()).inflight;
    first.child.kill('SIGKILL');
    const killed = await first.exited;
    expect(killed.signal).toBe('SIGKILL');
    // The kill happened mid-send: jobs were claimed and not finished (some of them already applied by the service).
    expect(inflightAtKill).toBeGreaterThan(0);
    const afterKill = await db.counts();
    expect(afterKill.delivered).toBeLessThan(JOBS);
    expect(afterKill.inflight + afterKill.pending).toBeGreaterThan(0);

    await world.setFaults({ latency_ms: 20 });
    const second = worker(world, db.file);
    await waitUntil(async () => (await db!.counts()).delivered === JOBS, 40_000, 100);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);

    const counts = await db.counts();
    expect(counts).toEqual({
      pending: 0,
      inflight: 0,
      delivered: JOBS,
      dead: 0,
      expired: 0,
      cancelled: 0,
      unmatched: 0,
    });
    const seen = await world.conversions();
    const orders = seen.conversions.map((c) => c.order_id);
    expect(orders).toHaveLength(JOBS);
    expect(new Set(orders)).toEqual(new Set(clicks.map((_, i) => `crash-${i}`)));
    expect(seen.counts.late).toBe(0);
    // Each order was charged once: the campaign's spend is one bid per order, whatever was re-sent.
    expect(await world.spendMicros()).toBe(JOBS * world.bidMicros);
    // The value of each conversion is the one enqueued for its order.
    for (const c of seen.conversions)
      expect(c.value_micros).toBe(10_000 + Number(c.order_id.slice('crash-'.length)));
  }, 90_000);
});

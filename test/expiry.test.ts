/**
 * Expiry during an outage: the service fails every request while the sandbox clock moves past the 7-day
 * window. The Dispatcher's clock follows the sandbox's, so its jobs become `expired` at their deadline and
 * not a single request reaches the service late — even after the service comes back.
 */
import { createClient } from '@postback/client';
import { createDispatcher, DAY_MS } from '@postback/core';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createOutboxFile, type OutboxFile } from './helpers/outbox-file.ts';
import { waitUntil } from './helpers/worker-process.ts';

const JOBS = 20;

let world: SandboxWorld | undefined;
let db: OutboxFile | undefined;
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await world?.close();
  await db?.cleanup();
});

describe('an outage longer than the confirmation window', () => {
  it('expires the jobs at their deadline without one late request, even once the service is back', async () => {
    world = await startSandboxWorld();
    const w = world;
    db = createOutboxFile('postback-expiry-');
    const outbox = db.outbox;
    // The Dispatcher reads the sandbox clock: real time plus the sandbox's offset, refreshed on every advance.
    let offsetMs = (await w.now()) - Date.now();
    const now = () => Date.now() + offsetMs;
    const advance = async (seconds: number) => {
      offsetMs = (await w.advanceClock(seconds)) - Date.now();
    };

    const clicks = await w.clicks(JOBS);
    for (const [i, click] of clicks.entries()) {
      await outbox.confirm({
        orderId: `exp-${i}`,
        valueMicros: 1_000,
        click: { token: click.token, clickedAt: click.clickedAt },
      });
    }
    await w.setFaults({ error_rate: 1, error_status: 503 });

    const client = createClient({ baseUrl: w.url, apiKey: w.conversionsKey });
    cleanups.push(() => client.close());
    const dispatcher = createDispatcher({
      outbox,
      client,
      now,
      concurrency: 5,
      pollIntervalMs: 20,
      backoff: { baseMs: 20, maxMs: 200, minMs: 10 },
    });
    cleanups.push(() => dispatcher.stop({ timeoutMs: 5_000 }));
    dispatcher.start();

    const jobs = async () =>
      Promise.all(clicks.map((_, i) => outbox.getByOrder(`exp-${i}`).then((found) => found[0])));
    // Every job was tried against the outage, and none got anywhere.
    await waitUntil(async () => (await jobs()).every((job) => (job?.attempts ?? 0) >= 1), 15_000);
    expect((await jobs()).every((job) => job?.state === 'pending' || job?.state === 'inflight')).toBe(true);

    // Six days in: still inside the window, still failing, still pending.
    await advance(6 * 86_400);
    await waitUntil(async () => (await jobs()).every((job) => (job?.attempts ?? 0) >= 2), 15_000);
    expect(await db.counts()).toMatchObject({ expired: 0, delivered: 0, dead: 0 });

    // Past 7 days (and so past every deadline); only then does the service come back.
    await advance(DAY_MS / 1000 + 60);
    await w.clearFaults();
    await waitUntil(async () => (await db!.counts()).expired === JOBS, 15_000);
    // Give a wrong Dispatcher time to send once more, now that the service answers.
    await new Promise((resolve) => setTimeout(resolve, 500));

    const seen = await w.conversions();
    expect(seen.counts.late).toBe(0);
    // No request reached the service's handler at all: during the outage none was processed, after it none was sent.
    expect(seen.counts.requests).toBe(0);
    expect(seen.conversions).toEqual([]);
    for (const job of await jobs()) {
      expect(job?.state).toBe('expired');
      expect(job?.lastError).toMatch(/deadline/i);
    }
    expect((await db.counts()).inflight).toBe(0);
  }, 60_000);
});

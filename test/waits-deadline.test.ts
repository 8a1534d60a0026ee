/**
 * Waits answer to the deadline (issue 30 item 1), over real HTTP against the sandbox on its movable clock:
 * a retry's last chance lies where a worker polling late can still claim it, and a 429 with an absurd
 * `Retry-After` pauses delivery only until the last chance of the earliest deadline it holds back, when
 * one request probes; jobs whose deadline passes under such a pause end `expired`, counted, unsent.
 */
import { createClient } from '@postback/client';
import { createDispatcher, type Dispatcher, type Outbox } from '@postback/core';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createOutboxFile, type OutboxFile } from './helpers/outbox-file.ts';
import { waitUntil } from './helpers/worker-process.ts';

const JOBS = 4;
/** The Dispatcher's timing in these tests: a last chance lies 6 s before the deadline. */
const SEND_TIMEOUT_MS = 5_000;
const POLL_INTERVAL_MS = 1_000;

let world: SandboxWorld | undefined;
let db: OutboxFile | undefined;
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await world?.close();
  await db?.cleanup();
});

/** A sandbox, an outbox of JOBS confirmations, and a Dispatcher on the sandbox's clock. */
async function setUp(options: { backoff?: { baseMs: number; maxMs: number; minMs: number } } = {}) {
  world = await startSandboxWorld();
  const w = world;
  db = createOutboxFile('postback-waits-');
  const outbox: Outbox = db.outbox;
  let offsetMs = (await w.now()) - Date.now();
  const now = () => Date.now() + offsetMs;
  const clicks = await w.clicks(JOBS);
  for (const [i, click] of clicks.entries()) {
    await outbox.confirm({
      orderId: `wait-${i}`,
      valueMicros: 1_000,
      click: { token: click.token, clickedAt: click.clickedAt },
    });
  }
  const client = createClient({ baseUrl: w.url, apiKey: w.conversionsKey });
  cleanups.push(() => client.close());
  const dispatcher: Dispatcher = createDispatcher({
    outbox,
    client,
    now,
    pollIntervalMs: POLL_INTERVAL_MS,
    sendTimeoutMs: SEND_TIMEOUT_MS,
    random: () => 0.999,
    ...options,
  });
  cleanups.push(() => dispatcher.stop({ timeoutMs: 5_000 }));
  const jobs = async () =>
    Promise.all(clicks.map((_, i) => outbox.getByOrder(`wait-${i}`).then((found) => found[0])));
  /** Moves the sandbox's clock (and so the Dispatcher's) to `at`, then wakes the Dispatcher. */
  const moveTo = async (at: number) => {
    offsetMs = (await w.advanceClock(Math.ceil((at - now()) / 1000))) - Date.now();
    dispatcher.wake();
  };
  const earliestDeadline = async () => Math.min(...(await jobs()).map((job) => job?.deadline ?? 0));
  return { w, outbox, dispatcher, jobs, moveTo, earliestDeadline, now };
}

describe('the last chance of a retry', () => {
  it('is taken by a worker that polls a second late, 4 s before the deadline, after a first 503', async () => {
    const day = 86_400_000;
    const { w, dispatcher, jobs, moveTo, earliestDeadline } = await setUp({
      backoff: { baseMs: 30 * day, maxMs: 30 * day, minMs: 500 },
    });
    await w.setFaults({ fail_next: JOBS, error_status: 503 });
    dispatcher.start();
    // Every first try met the 503; the backoff (30 days) is cut to the last chance.
    await waitUntil(async () => (await jobs()).every((job) => (job?.attempts ?? 0) >= 1), 15_000);
    await waitUntil(async () => (await jobs()).every((job) => job?.state === 'pending'), 15_000);
    // Past every last chance (deadline − send timeout − poll interval), before every deadline.
    await moveTo((await earliestDeadline()) - 4_000);
    // Until each has its outcome recorded (a job sending, or waiting for its claim's batch of outcomes, is
    // still inflight).
    const open = new Set(['pending', 'inflight']);
    await waitUntil(async () => (await jobs()).every((job) => !open.has(job?.state ?? 'pending')), 15_000);

    expect((await jobs()).map((job) => job?.state)).toEqual(Array(JOBS).fill('delivered'));
    const seen = await w.conversions();
    expect(seen.counts.late).toBe(0);
    expect(seen.conversions).toHaveLength(JOBS);
  }, 60_000);
});

describe('a 429 with Retry-After: 999999999', () => {
  it('pauses delivery only until the earliest last chance, when one probe goes and the orders are sent', async () => {
    const { w, dispatcher, jobs, moveTo, earliestDeadline } = await setUp();
    await w.setFaults({ fail_next: 1, error_status: 429, retry_after_s: 999_999_999 });
    const paused: { until: number }[] = [];
    dispatcher.on('paused', (event) => paused.push(event));
    dispatcher.start();
    await waitUntil(async () => paused.length === 1, 15_000);
    const deadline = await earliestDeadline();
    // The pause ends by the earliest last chance, not in a year.
    expect(paused[0]?.until).toBeLessThanOrEqual(deadline - SEND_TIMEOUT_MS - POLL_INTERVAL_MS);
    await moveTo(deadline - 4_000);
    await waitUntil(async () => (await jobs()).every((job) => job?.state === 'delivered'), 15_000);

    const seen = await w.conversions();
    expect(seen.counts.late).toBe(0);
    expect(seen.conversions).toHaveLength(JOBS);
  }, 60_000);

  it('leaves no job pending past its deadline: the service refusing to the end, each ends expired and counted', async () => {
    const { w, dispatcher, jobs, moveTo, earliestDeadline } = await setUp();
    await w.setFaults({ error_rate: 1, error_status: 429, retry_after_s: 999_999_999 });
    const expired: string[] = [];
    dispatcher.on('expired', ({ job }) => expired.push(job.orderId));
    let paused = 0;
    dispatcher.on('paused', () => {
      paused += 1;
    });
    dispatcher.start();
    await waitUntil(async () => paused === 1, 15_000);
    // Past every deadline.
    await moveTo((await earliestDeadline()) + 60 * 60_000);
    await waitUntil(async () => (await jobs()).every((job) => job?.state === 'expired'), 30_000);

    expect(expired.sort()).toEqual(Array.from({ length: JOBS }, (_, i) => `wait-${i}`));
    expect((await dispatcher.metrics()).counters.expired).toBe(JOBS);
    expect((await w.conversions()).counts.late).toBe(0);
  }, 60_000);
});

describe('a refusal that meets every job', () => {
  it('pauses the account after 5 distinct jobs refused alike (a wrong base path) instead of dead-lettering every job', async () => {
    const { w, outbox, jobs } = await setUp();
    const client = createClient({ baseUrl: `${w.url}/api`, apiKey: w.conversionsKey });
    cleanups.push(() => client.close());
    const more = await w.clicks(6);
    for (const [i, click] of more.entries()) {
      await outbox.confirm({
        orderId: `wait-more-${i}`,
        valueMicros: 1_000,
        click: { token: click.token, clickedAt: click.clickedAt },
      });
    }
    const dispatcher = createDispatcher({ outbox, client, concurrency: 1 });
    cleanups.push(() => dispatcher.stop({ timeoutMs: 5_000 }));
    const paused: { cause: string; status: number | null }[] = [];
    dispatcher.on('paused', (event) => paused.push(event));
    dispatcher.on('account-paused', (event) => paused.push(event));
    await dispatcher.drain({ maxRounds: 20 });

    expect(paused).toEqual([expect.objectContaining({ cause: 'systematic-refusal', status: 404 })]);
    const counts = (await outbox.stats(Date.now())).counts;
    // The four refused before the fifth made it systematic are dead; the rest wait for the probe.
    expect(counts.dead).toBe(4);
    expect(counts.pending).toBe(JOBS + 6 - 4);
    expect((await jobs()).length).toBe(JOBS);
  }, 60_000);
});

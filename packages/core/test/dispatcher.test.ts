/**
 * Dispatcher tests over real HTTP: the real `createClient` from `@postback/client` talks to a scripted
 * fake of the ad service on an ephemeral port, and jobs live in the memory outbox on a fake clock.
 */
import { inspect } from 'node:util';
import { type AdServiceClient, createClient } from '@postback/client';
import {
  type ConfirmJob,
  createDispatcher,
  createMemoryOutbox,
  DAY_MS,
  type Dispatcher,
  type DispatcherEventName,
  type DispatcherEvents,
  type DispatcherOptions,
  OptionsError,
  type Outbox,
} from '@postback/core';
import { createFakeClock, type FakeClock } from '@postback/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONFIRM_PATH, type FakeAdService, REFUND_PATH, startFakeAdService } from './fake-ad-service.ts';

const API_KEY = 'pbsk_live_TOPSECRET_0123456789abcdef';
const HOUR = 3_600_000;

let clock: FakeClock;
let outbox: Outbox;
let service: FakeAdService;
let client: AdServiceClient;
const dispatchers: Dispatcher[] = [];
let events: Array<{ name: DispatcherEventName; payload: unknown }>;

beforeEach(async () => {
  clock = createFakeClock();
  outbox = createMemoryOutbox({ now: clock.now });
  service = await startFakeAdService();
  client = createClient({ baseUrl: service.url, apiKey: API_KEY, timeout: 5_000 });
  events = [];
});

afterEach(async () => {
  for (const dispatcher of dispatchers.splice(0)) await dispatcher.stop({ timeoutMs: 100 });
  await client.close();
  await service.close();
  await outbox.close();
});

function dispatcherWith(overrides: Partial<DispatcherOptions> = {}): Dispatcher {
  const dispatcher = createDispatcher({
    outbox,
    client,
    now: clock.now,
    random: () => 0.5,
    quickRetries: { retries: 0 },
    ...overrides,
  });
  for (const name of ['delivered', 'retried', 'dead', 'expired', 'paused', 'resumed', 'error'] as const) {
    dispatcher.on(name, (payload) => events.push({ name, payload }));
  }
  dispatchers.push(dispatcher);
  return dispatcher;
}

const eventsNamed = <K extends DispatcherEventName>(name: K) =>
  events.filter((e) => e.name === name).map((e) => e.payload as DispatcherEvents[K]);

async function enqueue(
  orderId: string,
  clickedAt = clock.now() - HOUR,
  valueMicros = 12_340_000,
): Promise<ConfirmJob> {
  return (await outbox.confirm({ orderId, valueMicros, click: { token: `tok_${orderId}_XyZ`, clickedAt } }))
    .job;
}

const confirmRequests = () => service.requests.filter((r) => r.path === CONFIRM_PATH);

describe('Dispatcher delivery', () => {
  it('delivers a confirm with its click token, order id and value, and records the campaign the service returned', async () => {
    const job = await enqueue('ord_1');
    const summary = await dispatcherWith().runOnce();
    expect(summary).toMatchObject({ claimed: 1, delivered: 1 });
    expect(confirmRequests()).toHaveLength(1);
    expect(confirmRequests()[0]?.body).toEqual({
      click_token: 'tok_ord_1_XyZ',
      order_id: 'ord_1',
      value_micros: 12_340_000,
    });
    expect(confirmRequests()[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(await outbox.get(job.id)).toMatchObject({
      state: 'delivered',
      campaignId: 'cmp_from_service',
      attempts: 1,
    });
    expect(eventsNamed('delivered')).toEqual([expect.objectContaining({ campaignId: 'cmp_from_service' })]);
  });

  it('retries a 5xx blip in-process and delivers without a durable retry', async () => {
    service.script(CONFIRM_PATH, { status: 503 }, { status: 502 });
    const job = await enqueue('ord_1');
    await dispatcherWith({ quickRetries: { retries: 2, minTimeoutMs: 1, maxTimeoutMs: 5 } }).runOnce();
    expect(confirmRequests()).toHaveLength(3);
    expect(await outbox.get(job.id)).toMatchObject({ state: 'delivered', attempts: 1 });
    expect(eventsNamed('retried')).toEqual([]);
  });

  it('sends a job back with jittered backoff when a 5xx outlasts the quick retries, and delivers it when due', async () => {
    service.script(CONFIRM_PATH, { status: 500, body: { detail: 'database unavailable' } });
    const job = await enqueue('ord_1');
    const dispatcher = dispatcherWith({ backoff: { baseMs: 10_000, maxMs: 60_000 } });
    expect(await dispatcher.runOnce()).toMatchObject({ retried: 1 });
    const [retried] = eventsNamed('retried');
    // random() = 0.5 and attempt 1: half of baseMs.
    expect(retried).toMatchObject({ status: 500, nextAttemptAt: clock.now() + 5_000, lastChance: false });
    expect(retried?.reason).toContain('database unavailable');
    expect(await dispatcher.runOnce()).toMatchObject({ claimed: 0 });
    clock.advance(5_000);
    expect(await dispatcher.runOnce()).toMatchObject({ delivered: 1 });
    expect(await outbox.get(job.id)).toMatchObject({ state: 'delivered', attempts: 2 });
    expect(confirmRequests()).toHaveLength(2);
  });

  it('honours Retry-After of a 429: the job is not sent again before that time', async () => {
    service.script(CONFIRM_PATH, {
      status: 429,
      headers: { 'retry-after': '120' },
      body: { detail: 'slow down' },
    });
    await enqueue('ord_1');
    const dispatcher = dispatcherWith({ quickRetries: { retries: 2, minTimeoutMs: 1, maxTimeoutMs: 5 } });
    await dispatcher.runOnce();
    expect(confirmRequests()).toHaveLength(1); // a 429 is not a blip: no quick retry
    expect(eventsNamed('retried')[0]).toMatchObject({ status: 429, nextAttemptAt: clock.now() + 120_000 });
    clock.advance(119_999);
    expect(await dispatcher.runOnce()).toMatchObject({ claimed: 0 });
    clock.advance(1);
    expect(await dispatcher.runOnce()).toMatchObject({ delivered: 1 });
  });

  it('waits at least backoff.minMs even when the service says Retry-After: 0, so drain() cannot spin', async () => {
    service.script(CONFIRM_PATH, { status: 429, headers: { 'retry-after': '0' } });
    await enqueue('ord_1');
    const dispatcher = dispatcherWith({ backoff: { minMs: 2_000 } });
    expect(await dispatcher.drain()).toMatchObject({ claimed: 1, retried: 1 });
    expect(eventsNamed('retried')[0]?.nextAttemptAt).toBe(clock.now() + 2_000);
    expect(confirmRequests()).toHaveLength(1);
  });

  it('dead-letters a job the service refuses with a 4xx, keeping the service’s detail as the reason', async () => {
    service.script(CONFIRM_PATH, { status: 422, body: { detail: 'click token tok_ord_1_XyZ is unknown' } });
    const job = await enqueue('ord_1');
    await dispatcherWith({ quickRetries: { retries: 2, minTimeoutMs: 1, maxTimeoutMs: 5 } }).runOnce();
    expect(confirmRequests()).toHaveLength(1);
    const stored = await outbox.get(job.id);
    expect(stored?.state).toBe('dead');
    expect(stored?.lastError).toContain('click token tok_ord_1_XyZ is unknown');
    expect(eventsNamed('dead')).toEqual([
      expect.objectContaining({ status: 422, reason: stored?.lastError }),
    ]);
    expect(await outbox.listDead()).toHaveLength(1);
  });

  it('treats a refused connection as transient and retries later', async () => {
    const port = new URL(service.url).port;
    await service.close();
    const offline = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: API_KEY, timeout: 1_000 });
    try {
      const job = await enqueue('ord_1');
      await dispatcherWith({ client: offline }).runOnce();
      expect((await outbox.get(job.id))?.state).toBe('pending');
      expect(eventsNamed('retried')).toHaveLength(1);
    } finally {
      await offline.close();
      service = await startFakeAdService(); // afterEach closes it
    }
  });

  it('sends at most `concurrency` requests at a time', async () => {
    for (let i = 0; i < 6; i++) service.script(CONFIRM_PATH, { status: 200, delayMs: 60 });
    for (let i = 0; i < 6; i++) await enqueue(`ord_${i}`);
    expect(await dispatcherWith({ concurrency: 2, batchSize: 6 }).runOnce()).toMatchObject({ delivered: 6 });
    expect(service.maxConcurrent).toBe(2);
  });
});

describe('Dispatcher deadlines', () => {
  it('never sends a job whose deadline has passed: it expires with zero requests', async () => {
    const job = await enqueue('ord_old', clock.now() - 8 * DAY_MS);
    expect(await dispatcherWith().runOnce()).toMatchObject({ expired: 1 });
    expect(service.requests).toHaveLength(0);
    expect(await outbox.get(job.id)).toMatchObject({ state: 'expired' });
    expect(eventsNamed('expired')[0]?.reason).toMatch(/deadline .* passed/);
  });

  it('checks the deadline before each quick retry too: no request leaves after it', async () => {
    const job = await enqueue('ord_1', clock.now() - 7 * DAY_MS + HOUR + 1_000); // deadline: 1 s from now
    service.script(CONFIRM_PATH, { status: 503 }, { status: 503 });
    service.onRequest(() => clock.advance(2_000)); // the first request takes "2 s"
    await dispatcherWith({ quickRetries: { retries: 2, minTimeoutMs: 1, maxTimeoutMs: 5 } }).runOnce();
    expect(confirmRequests()).toHaveLength(1);
    expect(await outbox.get(job.id)).toMatchObject({ state: 'expired' });
    expect((await outbox.get(job.id))?.lastError).toContain('503');
  });

  it('caps backoff at the deadline so the last attempt still happens inside the window, then expires', async () => {
    const job = await enqueue('ord_1', clock.now() - 7 * DAY_MS + HOUR + 10_000); // deadline: 10 s from now
    service.script(CONFIRM_PATH, { status: 503 }, { status: 503 });
    const dispatcher = dispatcherWith({ backoff: { baseMs: 600_000, maxMs: 600_000 }, random: () => 0.99 });
    await dispatcher.runOnce();
    const [retried] = eventsNamed('retried');
    expect(retried?.nextAttemptAt).toBe(job.deadline);
    expect(retried?.lastChance).toBe(true);
    clock.set(job.deadline as number);
    await dispatcher.runOnce();
    expect(confirmRequests()).toHaveLength(2);
    expect(confirmRequests().every((r) => r.at > 0)).toBe(true);
    expect(await outbox.get(job.id)).toMatchObject({ state: 'expired' });
    expect(eventsNamed('expired')).toHaveLength(1);
  });
});

describe('Dispatcher auth pause', () => {
  it.each([401, 403])(
    'pauses all delivery on %i without burning attempts, and resumes after a probe succeeds',
    async (status) => {
      service.script(CONFIRM_PATH, { status, body: { detail: 'key revoked' } });
      const jobs = [await enqueue('ord_1'), await enqueue('ord_2'), await enqueue('ord_3')];
      const dispatcher = dispatcherWith({ concurrency: 1, batchSize: 3, authPauseMs: 60_000 });
      expect(await dispatcher.runOnce()).toMatchObject({ claimed: 3, deferred: 3 });
      expect(confirmRequests()).toHaveLength(1); // the other two were not sent into the outage
      expect(eventsNamed('paused')).toEqual([
        expect.objectContaining({ status, until: clock.now() + 60_000 }),
      ]);
      expect(dispatcher.state).toBe('paused');
      for (const job of jobs) expect((await outbox.get(job.id))?.attempts).toBe(0);

      clock.advance(30_000);
      expect(await dispatcher.runOnce()).toMatchObject({ claimed: 0 });
      expect(confirmRequests()).toHaveLength(1);

      clock.advance(30_000);
      expect(await dispatcher.runOnce()).toMatchObject({ claimed: 1, delivered: 1 }); // the probe
      expect(eventsNamed('resumed')).toEqual([{ pausedForMs: 60_000 }]);
      expect(await dispatcher.drain()).toMatchObject({ delivered: 2 });
      expect(confirmRequests()).toHaveLength(4);
      expect(eventsNamed('paused')).toHaveLength(1);
    },
  );

  it('stays paused without a new alert when the probe is refused again', async () => {
    service.script(CONFIRM_PATH, { status: 401 }, { status: 401 });
    await enqueue('ord_1');
    const dispatcher = dispatcherWith({ authPauseMs: 1_000 });
    await dispatcher.runOnce();
    clock.advance(1_000);
    await dispatcher.runOnce();
    expect(dispatcher.state).toBe('paused');
    expect(eventsNamed('paused')).toHaveLength(1);
    expect(eventsNamed('resumed')).toHaveLength(0);
  });
});

describe('Dispatcher refunds', () => {
  it('sends a refund after its confirmation, with the campaign_id the confirmation returned', async () => {
    await enqueue('ord_1');
    const dispatcher = dispatcherWith();
    await dispatcher.runOnce();
    const { outcome } = await outbox.refund({ orderId: 'ord_1' });
    expect(outcome).toBe('enqueued');
    expect(await dispatcher.runOnce()).toMatchObject({ delivered: 1 });
    const refunds = service.requests.filter((r) => r.path === REFUND_PATH);
    expect(refunds.map((r) => r.body)).toEqual([{ campaign_id: 'cmp_from_service', order_id: 'ord_1' }]);
  });

  it('holds a refund requested while its confirm is in flight until the confirm is delivered', async () => {
    service.script(CONFIRM_PATH, { status: 200, delayMs: 150 });
    await enqueue('ord_1');
    const dispatcher = dispatcherWith();
    const first = dispatcher.runOnce();
    await service.waitForRequests(1);
    await outbox.refund({ orderId: 'ord_1' });
    expect(await dispatcherWith().runOnce()).toMatchObject({ claimed: 0 }); // another worker may not take it yet
    await first;
    await dispatcher.drain();
    expect(service.requests.map((r) => r.path)).toEqual([CONFIRM_PATH, REFUND_PATH]);
    expect(service.requests[1]?.body).toEqual({ campaign_id: 'cmp_from_service', order_id: 'ord_1' });
  });
});

describe('Dispatcher lifecycle', () => {
  it('stop() waits for a send that finishes within the timeout and records its outcome', async () => {
    service.script(CONFIRM_PATH, { status: 200, delayMs: 100 });
    const job = await enqueue('ord_1');
    const dispatcher = dispatcherWith({ pollIntervalMs: 10 });
    dispatcher.start();
    await service.waitForRequests(1);
    expect(await dispatcher.stop({ timeoutMs: 5_000 })).toEqual({ released: 0 });
    expect((await outbox.get(job.id))?.state).toBe('delivered');
  });

  it('stop() releases a send still in flight at the timeout: pending again, attempt not counted, nothing left inflight', async () => {
    service.script(CONFIRM_PATH, { status: 200, delayMs: 3_000 });
    const job = await enqueue('ord_1');
    const dispatcher = dispatcherWith({ pollIntervalMs: 10 });
    dispatcher.start();
    await service.waitForRequests(1);
    const started = Date.now();
    expect(await dispatcher.stop({ timeoutMs: 100 })).toEqual({ released: 1 });
    expect(Date.now() - started).toBeLessThan(2_000);
    // Its request was under way, so it may have been applied: marked, never "never charged".
    expect(await outbox.get(job.id)).toMatchObject({
      state: 'pending',
      attempts: 0,
      lease: null,
      maybeAppliedAt: clock.now(),
    });
    expect((await outbox.stats(clock.now())).counts.inflight).toBe(0);
    expect(dispatcher.state).toBe('idle');
  });

  it('start() delivers a job enqueued later as soon as the wake hook fires, without waiting for the poll', async () => {
    let wakeUp: (() => void) | undefined;
    let unsubscribed = false;
    const dispatcher = dispatcherWith({
      pollIntervalMs: 60_000,
      wake: (fn) => {
        wakeUp = fn;
        return () => {
          unsubscribed = true;
        };
      },
    });
    dispatcher.start();
    await new Promise((resolve) => setTimeout(resolve, 50)); // the loop found nothing and sleeps
    await enqueue('ord_1');
    wakeUp?.();
    await service.waitForRequests(1, 2_000);
    await dispatcher.stop({ timeoutMs: 2_000 });
    expect(eventsNamed('delivered')).toHaveLength(1);
    expect(unsubscribed).toBe(true);
  });

  it('renews the lease during a long send so a second worker cannot take the job', async () => {
    // A real clock here: the lease must hold across real time.
    const realOutbox = createMemoryOutbox();
    try {
      service.script(CONFIRM_PATH, { status: 200, delayMs: 700 });
      await realOutbox.confirm({
        orderId: 'ord_1',
        valueMicros: 1,
        click: { token: 'tok_1', clickedAt: Date.now() },
      });
      const worker = dispatcherWith({ outbox: realOutbox, now: Date.now, leaseMs: 300 });
      const running = worker.runOnce();
      await service.waitForRequests(1);
      await new Promise((resolve) => setTimeout(resolve, 450)); // past the first lease
      expect(
        await dispatcherWith({ outbox: realOutbox, now: Date.now, leaseMs: 300 }).runOnce(),
      ).toMatchObject({ claimed: 0 });
      expect(await running).toMatchObject({ delivered: 1 });
      expect(confirmRequests()).toHaveLength(1);
    } finally {
      await realOutbox.close();
    }
  });

  it('aborts a send whose lease renewal is refused (another worker owns the job) and records nothing', async () => {
    // A real clock here: the heart-beat renews by elapsed time.
    const realOutbox = createMemoryOutbox();
    try {
      service.script(CONFIRM_PATH, { status: 200, delayMs: 2_000 });
      const { job } = await realOutbox.confirm({
        orderId: 'ord_1',
        valueMicros: 1,
        click: { token: 'tok_1', clickedAt: Date.now() },
      });
      const stolen: Outbox = { ...realOutbox, extendLease: async () => false };
      const started = Date.now();
      const summary = await dispatcherWith({ outbox: stolen, leaseMs: 300, now: Date.now }).runOnce();
      expect(summary).toMatchObject({ claimed: 1, lost: 1, delivered: 0 });
      expect(Date.now() - started).toBeLessThan(1_500); // the request was aborted, not awaited
      expect(eventsNamed('delivered')).toEqual([]);
      expect((await realOutbox.get(job.id))?.state).toBe('inflight'); // left to whoever holds the lease now
    } finally {
      await realOutbox.close();
    }
  });

  it('keeps running when the outbox fails to answer a claim, reporting an error event', async () => {
    let failures = 1;
    const flaky: Outbox = {
      ...outbox,
      claim: async (options) => {
        if (failures-- > 0) throw new Error('database is locked');
        return outbox.claim(options);
      },
    };
    await enqueue('ord_1');
    const dispatcher = dispatcherWith({ outbox: flaky, pollIntervalMs: 10 });
    dispatcher.start();
    await service.waitForRequests(1, 2_000);
    await dispatcher.stop({ timeoutMs: 2_000 });
    expect(eventsNamed('error')).toEqual([expect.objectContaining({ during: 'claim' })]);
    expect(eventsNamed('delivered')).toHaveLength(1);
  });

  it('keeps claims going while one is slow to commit, each of at most batchSize jobs, and sends every job once', async () => {
    const asked: number[] = [];
    let underWay = 0;
    let mostUnderWay = 0;
    const slow: Outbox = {
      ...outbox,
      claim: async (options) => {
        asked.push(options.limit);
        underWay += 1;
        mostUnderWay = Math.max(mostUnderWay, underWay);
        try {
          await new Promise((resolve) => setTimeout(resolve, 30)); // a commit waiting on a slow fsync
          return await outbox.claim(options);
        } finally {
          underWay -= 1;
        }
      },
    };
    for (let i = 0; i < 40; i++) await enqueue(`ord_${i}`);
    const dispatcher = dispatcherWith({ outbox: slow, concurrency: 4, batchSize: 4, pollIntervalMs: 10 });
    dispatcher.start();
    await service.waitForRequests(40, 5_000);
    await dispatcher.stop({ timeoutMs: 2_000 });
    expect(mostUnderWay).toBeGreaterThan(1);
    expect(Math.max(...asked)).toBeLessThanOrEqual(4);
    const sent = confirmRequests().map((r) => r.body.order_id);
    expect(new Set(sent).size).toBe(40);
    expect(sent).toHaveLength(40);
    expect((await outbox.stats(clock.now())).counts).toMatchObject({ delivered: 40, inflight: 0 });
  });

  it('stop() waits for the claims under way and gives their jobs back: nothing left inflight, nothing sent', async () => {
    let claimed: () => void = () => {};
    const claimStarted = new Promise<void>((resolve) => {
      claimed = resolve;
    });
    const slow: Outbox = {
      ...outbox,
      claim: async (options) => {
        claimed();
        await new Promise((resolve) => setTimeout(resolve, 50));
        return outbox.claim(options);
      },
    };
    for (let i = 0; i < 3; i++) await enqueue(`ord_${i}`);
    const dispatcher = dispatcherWith({ outbox: slow, pollIntervalMs: 10 });
    dispatcher.start();
    await claimStarted;
    await dispatcher.stop({ timeoutMs: 1_000 });
    expect(confirmRequests()).toHaveLength(0);
    expect((await outbox.stats(clock.now())).counts).toMatchObject({ pending: 3, inflight: 0 });
  });

  it('reports queue depth, oldest pending age, nearest deadline and outcome counters', async () => {
    service.script(CONFIRM_PATH, { status: 200 }, { status: 400, body: { detail: 'bad' } });
    await enqueue('ord_1');
    clock.advance(1_000);
    await enqueue('ord_2');
    const dispatcher = dispatcherWith({ batchSize: 2, concurrency: 1 });
    await dispatcher.runOnce();
    clock.advance(1_000);
    const third = await enqueue('ord_3', clock.now() - 2 * DAY_MS);
    clock.advance(5_000);
    const metrics = await dispatcher.metrics();
    expect(metrics.depth).toEqual({
      pending: 1,
      inflight: 0,
      delivered: 1,
      dead: 1,
      expired: 0,
      cancelled: 0,
    });
    expect(metrics.oldestPendingAgeMs).toBe(5_000);
    expect(metrics.nearestDeadline).toMatchObject({
      orderId: 'ord_3',
      inMs: (third.deadline as number) - clock.now(),
    });
    expect(metrics.counters).toMatchObject({ delivered: 1, dead: 1, failed: 1, retried: 0, expired: 0 });
    expect(metrics.state).toBe('idle');
  });
});

describe('Dispatcher secrets and options', () => {
  it('never lets the API key reach events, dead-letter reasons, job records or inspect output', async () => {
    service.script(CONFIRM_PATH, {
      status: 400,
      body: { detail: `rejected header Authorization: Bearer ${API_KEY}` },
    });
    service.script(CONFIRM_PATH, { status: 503, body: { detail: `upstream saw api_key=${API_KEY}` } });
    await enqueue('ord_1');
    await enqueue('ord_2');
    const dispatcher = dispatcherWith();
    await dispatcher.runOnce();
    expect(eventsNamed('dead')).toHaveLength(1);
    expect(eventsNamed('retried')).toHaveLength(1);
    const everything = [
      JSON.stringify(events),
      inspect(events, { depth: 10 }),
      JSON.stringify(await outbox.getByOrder('ord_1')),
      JSON.stringify(await outbox.getByOrder('ord_2')),
      inspect(dispatcher, { depth: 5 }),
      JSON.stringify(await dispatcher.metrics()),
    ].join('\n');
    expect(everything).not.toContain('TOPSECRET');
    expect(everything).toContain('[redacted]');
  });

  it('rejects an unknown option by name and a bad value by its path', () => {
    const base = { outbox, client };
    expect(() => createDispatcher({ ...base, concurency: 4 } as never)).toThrow(OptionsError);
    expect(() => createDispatcher({ ...base, concurency: 4 } as never)).toThrow(/concurency/);
    expect(() => createDispatcher({ ...base, concurrency: 0 })).toThrow(
      expect.objectContaining({ field: 'concurrency' }),
    );
    expect(() => createDispatcher({ ...base, backoff: { baseMs: -1 } })).toThrow(
      expect.objectContaining({ field: 'backoff.baseMs' }),
    );
    expect(() => createDispatcher({ outbox, client: {} as never })).toThrow(
      expect.objectContaining({ field: 'client' }),
    );
  });
});

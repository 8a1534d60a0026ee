/**
 * The Dispatcher's lifecycle: start(), stop() and its timeout, the wake hook, lease renewal, claims that
 * fail or are slow, and the metrics it reports.
 * Real HTTP to a scripted fake of the ad service; set-up in `dispatcher-harness.ts`.
 */
import { createMemoryOutbox, DAY_MS, type Outbox } from '@postback/core';
import { describe, expect, it } from 'vitest';
import {
  clock,
  confirmRequests,
  dispatcherWith,
  enqueue,
  eventsNamed,
  outbox,
  service,
  setUpDispatcherHarness,
} from './dispatcher-harness.ts';
import { CONFIRM_PATH } from './fake-ad-service.ts';

setUpDispatcherHarness();

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
      unmatched: 0,
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

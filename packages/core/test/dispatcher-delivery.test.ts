/**
 * The Dispatcher delivering confirms: the request it sends, retries (each request an attempt), Retry-After,
 * dead-lettering on a 4xx, refused connections and the concurrency limit.
 * Real HTTP to a scripted fake of the ad service; set-up in `dispatcher-harness.ts`.
 */
import { createClient } from '@postback/client';
import { describe, expect, it } from 'vitest';
import {
  API_KEY,
  clock,
  confirmRequests,
  dispatcherWith,
  enqueue,
  eventsNamed,
  outbox,
  restartService,
  service,
  setUpDispatcherHarness,
} from './dispatcher-harness.ts';
import { CONFIRM_PATH } from './fake-ad-service.ts';

setUpDispatcherHarness();

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

  it('makes every request an attempt: two 5xx blips are two recorded retries, each due again within seconds', async () => {
    service.script(CONFIRM_PATH, { status: 503 }, { status: 502 });
    const job = await enqueue('ord_1');
    const dispatcher = dispatcherWith();
    expect(await dispatcher.runOnce()).toMatchObject({ retried: 1 });
    expect(confirmRequests()).toHaveLength(1); // nothing retried in-process
    // The default backoff (random() = 0.5): the first retry within a second, the next within two.
    expect(eventsNamed('retried')[0]?.nextAttemptAt).toBe(clock.now() + 500);
    clock.advance(500);
    expect(await dispatcher.runOnce()).toMatchObject({ retried: 1 });
    expect(eventsNamed('retried')[1]?.nextAttemptAt).toBe(clock.now() + 1_000);
    clock.advance(1_000);
    expect(await dispatcher.runOnce()).toMatchObject({ delivered: 1 });
    expect(confirmRequests()).toHaveLength(3);
    expect(await outbox.get(job.id)).toMatchObject({ state: 'delivered', attempts: 3 });
    const history = await outbox.history(job.id);
    expect(history.map((a) => [a.outcome, a.status])).toEqual([
      ['transient', 503],
      ['transient', 502],
      ['delivered', 200],
    ]);
  });

  it('sends a job back with jittered backoff after a 5xx, and delivers it when due', async () => {
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

  it('honours Retry-After of a 429: delivery pauses until then, the attempt not counted, then one job probes', async () => {
    service.script(CONFIRM_PATH, {
      status: 429,
      headers: { 'retry-after': '120' },
      body: { detail: 'slow down' },
    });
    const job = await enqueue('ord_1');
    await enqueue('ord_2');
    const dispatcher = dispatcherWith({ concurrency: 1 });
    expect(await dispatcher.runOnce()).toMatchObject({ claimed: 2, deferred: 2, retried: 0 });
    // One request; the other job was not sent into the wait.
    expect(confirmRequests()).toHaveLength(1);
    expect(eventsNamed('retried')).toEqual([]);
    const until = clock.now() + 120_000;
    expect(eventsNamed('paused')).toEqual([
      expect.objectContaining({ status: 429, cause: 'rate-limited', until }),
    ]);
    expect(dispatcher.state).toBe('paused');
    expect(await outbox.get(job.id)).toMatchObject({ state: 'pending', attempts: 0, nextAttemptAt: until });
    clock.advance(119_999);
    expect(await dispatcher.runOnce()).toMatchObject({ claimed: 0 });
    clock.advance(1);
    // The probe: one job, then the rest once it was answered.
    expect(await dispatcher.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    expect(eventsNamed('resumed')).toHaveLength(1);
    expect(await dispatcher.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    expect(await outbox.get(job.id)).toMatchObject({ state: 'delivered', attempts: 1 });
  });

  it('waits at least backoff.minMs even when the service says Retry-After: 0, so drain() cannot spin', async () => {
    service.script(CONFIRM_PATH, { status: 429, headers: { 'retry-after': '0' } });
    await enqueue('ord_1');
    const dispatcher = dispatcherWith({ backoff: { minMs: 2_000 } });
    expect(await dispatcher.drain()).toMatchObject({ claimed: 1, deferred: 1 });
    expect(eventsNamed('paused')[0]?.until).toBe(clock.now() + 2_000);
    expect(confirmRequests()).toHaveLength(1);
  });

  it('dead-letters a job the service refuses with a 4xx, keeping the service’s detail as the reason', async () => {
    service.script(CONFIRM_PATH, { status: 422, body: { detail: 'click token tok_ord_1_XyZ is unknown' } });
    const job = await enqueue('ord_1');
    await dispatcherWith().runOnce();
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
      await restartService(); // afterEach closes it
    }
  });

  it('sends at most `concurrency` requests at a time', async () => {
    for (let i = 0; i < 6; i++) service.script(CONFIRM_PATH, { status: 200, delayMs: 60 });
    for (let i = 0; i < 6; i++) await enqueue(`ord_${i}`);
    expect(await dispatcherWith({ concurrency: 2, batchSize: 6 }).runOnce()).toMatchObject({ delivered: 6 });
    expect(service.maxConcurrent).toBe(2);
  });
});

/**
 * The Dispatcher against a service that surprises it (issue "keep the money promise"): answers we cannot
 * read, answers that are not the service's, a closed window, Retry-After on a 503, a key echoed back, and
 * requests that may have been applied although no answer says so. Real `createClient` over real HTTP to a
 * scripted fake of the service, jobs in the memory outbox on a fake clock.
 */
import { inspect } from 'node:util';
import { createClient } from '@postback/client';
import { DAY_MS } from '@postback/core';
import { describe, expect, it } from 'vitest';
import {
  clock,
  dispatcherWith,
  enqueue,
  HOUR,
  outbox,
  requestsTo,
  restartService,
  events as seen,
  service,
  setUpDispatcherHarness,
} from './dispatcher-harness.ts';
import { CONFIRM_PATH, REFUND_PATH } from './fake-ad-service.ts';

const API_KEY = 'pbsk_live_ECHOED_9f8e7d6c5b4a';

setUpDispatcherHarness({ apiKey: API_KEY, valueMicros: 5_000_000, tokenSuffix: 'abc' });

describe('a 2xx means applied, whatever its body', () => {
  it.each([
    ['cut short', '{"order_id": "ord_1", "campa'],
    ["a proxy's page", '<html>OK</html>'],
    ['empty', ''],
    ['JSON of another shape', { order_id: 'ord_1', campaign_id: 42, status: 'confirmed' }],
  ])('delivers a confirmation whose 2xx body is %s, its campaign unknown, sent once', async (_, body) => {
    service.script(CONFIRM_PATH, { status: 200, body });
    const job = await enqueue('ord_1');
    await dispatcherWith().runOnce();
    expect(requestsTo(CONFIRM_PATH)).toHaveLength(1);
    expect(await outbox.get(job.id)).toMatchObject({ state: 'delivered', campaignId: null });
  });

  it('a refund of such an order dead-letters naming what to supply, and goes out once a campaign is given', async () => {
    service.script(CONFIRM_PATH, { status: 200, body: '' });
    await enqueue('ord_1');
    const d = dispatcherWith();
    await d.runOnce();
    expect((await outbox.refund({ orderId: 'ord_1' })).outcome).toBe('enqueued');
    await d.runOnce();
    const [, refund] = await outbox.getByOrder('ord_1');
    expect(refund).toMatchObject({ kind: 'refund', state: 'dead' });
    expect(refund?.lastError).toMatch(/campaign_id.*refund --campaign/);
    expect(requestsTo(REFUND_PATH)).toHaveLength(0);

    expect(await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_7' })).toMatchObject({
      outcome: 'updated',
      job: { state: 'pending', campaignId: 'cmp_7' },
    });
    await d.runOnce();
    expect(requestsTo(REFUND_PATH).map((r) => r.body)).toEqual([{ campaign_id: 'cmp_7', order_id: 'ord_1' }]);
  });
});

describe('a request that may have been applied is never "never charged"', () => {
  it('a confirmation whose answers are lost until its deadline expires maybe applied, and its refund is sent', async () => {
    // Every answer times out (the service applied it, the answer never came back) until the deadline.
    const clickedAt = clock.now() - 7 * DAY_MS + 2 * HOUR;
    const job = await enqueue('ord_1', clickedAt);
    service.script(CONFIRM_PATH, { status: 200, delayMs: 3_000 });
    const d = dispatcherWith({ sendTimeoutMs: 50, backoff: { baseMs: HOUR, maxMs: HOUR, minMs: 1 } });
    await d.runOnce();
    const retried = await outbox.get(job.id);
    expect(retried).toMatchObject({ state: 'pending' });
    expect(retried?.maybeAppliedAt).toBe(clock.now());
    clock.advance(2 * HOUR);
    await d.runOnce();
    const expired = await outbox.get(job.id);
    expect(expired?.state).toBe('expired');
    expect(expired?.maybeAppliedAt).toBe(retried?.maybeAppliedAt);

    const outcome = await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_1' });
    expect(outcome).toMatchObject({ outcome: 'enqueued', job: { campaignId: 'cmp_1' } });
    // The reversal goes out with the default send timeout: 50 ms is too short on a loaded machine.
    await dispatcherWith().runOnce();
    expect(requestsTo(REFUND_PATH).map((r) => r.body.order_id)).toEqual(['ord_1']);
  });

  it('a clear 4xx refusal leaves the confirmation never charged: its refund cancels it', async () => {
    service.script(CONFIRM_PATH, { status: 422, body: { detail: 'click_token unknown' } });
    const job = await enqueue('ord_1');
    await dispatcherWith().runOnce();
    expect(await outbox.get(job.id)).toMatchObject({ state: 'dead', maybeAppliedAt: null });
    expect((await outbox.refund({ orderId: 'ord_1' })).outcome).toBe('cancelled');
  });

  it('a 5xx may have been applied: a dead-lettered confirmation after it is reversed, not cancelled', async () => {
    service.script(
      CONFIRM_PATH,
      { status: 502, body: '<html>bad gateway</html>' },
      { status: 422, body: { detail: 'order_id conflicts' } },
    );
    const job = await enqueue('ord_1');
    const d = dispatcherWith({ backoff: { baseMs: 1_000, maxMs: 1_000, minMs: 1 } });
    await d.runOnce();
    clock.advance(1_000);
    await d.runOnce();
    expect(await outbox.get(job.id)).toMatchObject({ state: 'dead' });
    expect((await outbox.get(job.id))?.maybeAppliedAt).not.toBeNull();
    expect((await outbox.refund({ orderId: 'ord_1', campaignId: 'cmp_1' })).outcome).toBe('enqueued');
  });

  it('stop() during a send gives the job back due now and marked maybe applied', async () => {
    service.script(CONFIRM_PATH, { status: 200, delayMs: 3_000 });
    const job = await enqueue('ord_1');
    const d = dispatcherWith({ pollIntervalMs: 10 });
    d.start();
    await service.waitForRequests(1);
    await d.stop({ timeoutMs: 50 });
    expect(await outbox.get(job.id)).toMatchObject({ state: 'pending', attempts: 0, lease: null });
    expect((await outbox.get(job.id))?.maybeAppliedAt).toBe(clock.now());
    expect((await outbox.refund({ orderId: 'ord_1' })).outcome).toBe('enqueued');
  });

  it('a refused connection never reached the service: nothing is marked', async () => {
    const port = new URL(service.url).port;
    await service.close();
    const offline = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: API_KEY, timeout: 1_000 });
    try {
      const job = await enqueue('ord_1');
      await dispatcherWith({ client: offline }).runOnce();
      expect(await outbox.get(job.id)).toMatchObject({ state: 'pending', maybeAppliedAt: null });
    } finally {
      await offline.close();
      await restartService();
    }
  });
});

describe('answers that are not about the job', () => {
  it('honours Retry-After on a 503: the next attempt no sooner than asked', async () => {
    service.script(CONFIRM_PATH, { status: 503, headers: { 'retry-after': '600' } });
    const job = await enqueue('ord_1');
    const d = dispatcherWith();
    await d.runOnce();
    expect(requestsTo(CONFIRM_PATH)).toHaveLength(1);
    expect(await outbox.get(job.id)).toMatchObject({
      state: 'pending',
      nextAttemptAt: clock.now() + 600_000,
    });
    clock.advance(599_999);
    expect(await d.runOnce()).toMatchObject({ claimed: 0 });
  });

  it('a 404 that is not the service’s JSON error (a wrong base path) pauses delivery instead of dead-lettering', async () => {
    service.script(CONFIRM_PATH, { status: 404, body: '<html>Not Found</html>' });
    const job = await enqueue('ord_1');
    const d = dispatcherWith();
    expect(await d.runOnce()).toMatchObject({ deferred: 1, dead: 0 });
    expect(d.state).toBe('paused');
    expect(await outbox.get(job.id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(seen).toContainEqual({ name: 'paused', payload: expect.objectContaining({ status: 404 }) });
  });

  it('the service’s own 404 (JSON with detail) still dead-letters the job', async () => {
    service.script(CONFIRM_PATH, { status: 404, body: { detail: 'click_token not found' } });
    const job = await enqueue('ord_1');
    await dispatcherWith().runOnce();
    expect(await outbox.get(job.id)).toMatchObject({ state: 'dead' });
  });

  it('a refusal saying the window has closed expires the job instead of dead-lettering it', async () => {
    service.script(CONFIRM_PATH, {
      status: 422,
      body: { detail: 'click is older than 7 days; confirmations are accepted for 7 days after the click' },
    });
    // A click six and a half days old: the service's clock may well have closed its window.
    const job = await enqueue('ord_1', clock.now() - 6 * DAY_MS - 12 * HOUR);
    await dispatcherWith().runOnce();
    const stored = await outbox.get(job.id);
    expect(stored?.state).toBe('expired');
    expect(stored?.lastError).toContain('older than 7 days');
    expect(await outbox.replay({ all: true }, clock.now())).toBe(0);
  });

  it('a confirmation of a day-old click refused as "older than 7 days" is dead-lettered, not expired', async () => {
    service.script(CONFIRM_PATH, {
      status: 422,
      body: { detail: 'click is older than 7 days; confirmations are accepted for 7 days after the click' },
    });
    const job = await enqueue('ord_1', clock.now() - DAY_MS);
    await dispatcherWith().runOnce();
    // Not plausible for its own clock: a final expiry would hide it; a dead job shows in reconcile.
    expect(await outbox.get(job.id)).toMatchObject({ state: 'dead' });
  });

  it('windowClosedPattern says which refusals mean a closed window', async () => {
    service.script(CONFIRM_PATH, { status: 422, body: { detail: 'conversion_window_exceeded' } });
    const job = await enqueue('ord_1', clock.now() - 6 * DAY_MS - 12 * HOUR);
    await dispatcherWith({ windowClosedPattern: /window_exceeded/ }).runOnce();
    expect((await outbox.get(job.id))?.state).toBe('expired');
  });
});

describe('what the service sends back is stored safely', () => {
  it('never stores or emits the API key a service echoes back, nor control characters', async () => {
    service.script(CONFIRM_PATH, {
      status: 422,
      body: { detail: `key ${API_KEY} is not allowed\n| 99 | delivered |\u001b[2J\u202e` },
    });
    const job = await enqueue('ord_1');
    await dispatcherWith().runOnce();
    const stored = await outbox.get(job.id);
    expect(stored?.state).toBe('dead');
    const everything = [JSON.stringify(stored), JSON.stringify(seen), inspect(seen, { depth: 10 })].join('');
    expect(everything).not.toContain('ECHOED');
    expect(stored?.lastError).toContain('[redacted]');
    expect(stored?.lastError).not.toMatch(/[\p{Cc}\u202e]/u);
    expect(stored?.lastError).toContain('\\u{a}| 99 |');
  });
});

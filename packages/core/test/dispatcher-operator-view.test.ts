/**
 * What the Dispatcher leaves for operators: every send in the job's attempt history (status, outcome,
 * redacted detail, duration), an `at-risk` event once per job entering its deadline's warning window,
 * and the worker's heart-beat (state, pause and its reason). Real HTTP to a scripted fake of the ad
 * service; set-up in `dispatcher-harness.ts`.
 */
import type { DispatcherEvents } from '@postback/core';
import { describe, expect, it } from 'vitest';
import {
  API_KEY,
  clock,
  dispatcherWith,
  enqueue,
  HOUR,
  outbox,
  service,
  setUpDispatcherHarness,
} from './dispatcher-harness.ts';
import { CONFIRM_PATH } from './fake-ad-service.ts';

setUpDispatcherHarness();

const DAY = 24 * HOUR;

/** Resolves once `check` holds, polling the real event loop (the watch runs on real timers). */
async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('Dispatcher attempt history', () => {
  it('records each send: a 404 that killed the job, then after replay a 503 and the delivery', async () => {
    service.script(
      CONFIRM_PATH,
      { status: 404, body: { detail: 'click_token not found' } },
      { status: 503, body: { detail: `fault injected for ${API_KEY}` } },
    );
    const job = await enqueue('ord_h');
    const dispatcher = dispatcherWith();
    const seen: Array<DispatcherEvents['attempt']> = [];
    dispatcher.on('attempt', (payload) => seen.push(payload));
    expect(await dispatcher.runOnce()).toMatchObject({ dead: 1 });
    await outbox.replay({ ids: [job.id] }, clock.now());
    expect(await dispatcher.runOnce()).toMatchObject({ retried: 1 });
    clock.advance(HOUR);
    expect(await dispatcher.runOnce()).toMatchObject({ delivered: 1 });

    const history = await outbox.history(job.id);
    expect(history.map((a) => [a.outcome, a.status])).toEqual([
      ['permanent', 404],
      ['transient', 503],
      ['delivered', 200], // the status of a 2xx too, as the client tells it
    ]);
    expect(history[0]?.detail).toContain('click_token not found');
    expect(history[2]?.detail).toBeNull();
    for (const attempt of history) {
      expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
      expect(attempt.startedAt).toBeLessThanOrEqual(clock.now());
    }
    // The attempt event carried the same records, as they happened.
    expect(seen.map((e) => e.attempt)).toEqual(history);
    expect(seen.every((e) => e.job.id === job.id)).toBe(true);
    // The service echoed the key back: the history must not keep it.
    expect(JSON.stringify(history)).not.toContain(API_KEY);
  });

  it('a 401 pause records the refused send but not the jobs given back untried', async () => {
    service.script(CONFIRM_PATH, { status: 401, body: { detail: 'key revoked' } });
    const first = await enqueue('ord_p1');
    const second = await enqueue('ord_p2');
    const dispatcher = dispatcherWith({ concurrency: 1, batchSize: 2 });
    expect(await dispatcher.runOnce()).toMatchObject({ deferred: 2 });
    const histories = [await outbox.history(first.id), await outbox.history(second.id)];
    expect(histories.map((h) => h.map((a) => [a.outcome, a.status]))).toEqual([[['auth', 401]], []]);
  });
});

describe('Dispatcher watch', () => {
  it('emits at-risk once per open job whose deadline comes within atRiskWithinMs', async () => {
    // Deadlines 7 days after the click minus the default 1 h margin: in ~5 h, ~29 h and ~6 days.
    const soon = await enqueue('ord_soon', clock.now() - 7 * DAY + 6 * HOUR);
    await enqueue('ord_later', clock.now() - 6 * DAY + 6 * HOUR);
    await enqueue('ord_far', clock.now() - DAY);
    const atRisk: Array<DispatcherEvents['at-risk']> = [];
    const dispatcher = dispatcherWith({ watchIntervalMs: 20 });
    dispatcher.on('at-risk', (payload) => atRisk.push(payload));
    // Every job waits a day for its next attempt, so the running Dispatcher sends none of them meanwhile.
    const held = await outbox.claim({ now: clock.now(), limit: 3, leaseMs: 1_000 });
    for (const job of held) {
      const later = {
        now: clock.now(),
        nextAttemptAt: clock.now() + DAY,
        error: 'held',
        countAttempt: false,
      };
      expect(await outbox.retry(job, later)).toBe(true);
    }
    dispatcher.start();
    await until(() => atRisk.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 100)); // several more rounds
    expect(atRisk.map((e) => e.job.orderId)).toEqual(['ord_soon']);
    expect(atRisk[0]?.deadline).toBe(soon.deadline);
    expect(atRisk[0]?.inMs).toBe((soon.deadline as number) - clock.now());

    clock.advance(6 * HOUR); // ord_later enters the 24 h window
    await until(() => atRisk.length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(atRisk.map((e) => e.job.orderId)).toEqual(['ord_soon', 'ord_later']);
    await dispatcher.stop({ timeoutMs: 100 });
  });

  it('records its heart-beat while running, with the pause and its reason, and a last beat when stopped', async () => {
    service.script(CONFIRM_PATH, { status: 403, body: { detail: 'scope conversions missing' } });
    await enqueue('ord_b');
    const dispatcher = dispatcherWith({
      watchIntervalMs: 20,
      worker: { id: 'shop-1:42', version: '9.9.9' },
    });
    dispatcher.start();
    await until(
      async () => (await outbox.workers({ now: clock.now(), sinceMs: HOUR }))[0]?.state === 'paused',
    );
    const [paused] = await outbox.workers({ now: clock.now(), sinceMs: HOUR });
    expect(paused).toMatchObject({
      workerId: 'shop-1:42',
      version: '9.9.9',
      state: 'paused',
      pausedUntil: expect.any(Number),
    });
    expect(paused?.pauseReason).toContain('scope conversions missing');
    await dispatcher.stop({ timeoutMs: 100 });
    const [last] = await outbox.workers({ now: clock.now(), sinceMs: HOUR });
    expect(last?.state).toBe('stopped');
  });

  it('beats at once when delivery pauses, not at the next round of the watch', async () => {
    service.script(CONFIRM_PATH, { status: 401, body: { detail: 'unknown key' } });
    await enqueue('ord_c');
    const dispatcher = dispatcherWith({
      watchIntervalMs: HOUR,
      worker: { id: 'shop-1:43', version: '9.9.9' },
    });
    dispatcher.start();
    await until(
      async () => (await outbox.workers({ now: clock.now(), sinceMs: HOUR }))[0]?.state === 'paused',
    );
    const [paused] = await outbox.workers({ now: clock.now(), sinceMs: HOUR });
    expect(paused?.pauseReason).toContain('unknown key');
    await dispatcher.stop({ timeoutMs: 100 });
  });
});

/**
 * The Dispatcher and each job's deadline: no request leaves after it, and backoff is capped by it.
 * Real HTTP to a scripted fake of the ad service; set-up in `dispatcher-harness.ts`.
 */
import { DAY_MS } from '@postback/core';
import { describe, expect, it } from 'vitest';
import {
  clock,
  confirmRequests,
  dispatcherWith,
  enqueue,
  eventsNamed,
  HOUR,
  outbox,
  service,
  setUpDispatcherHarness,
} from './dispatcher-harness.ts';
import { CONFIRM_PATH } from './fake-ad-service.ts';

setUpDispatcherHarness();

describe('Dispatcher deadlines', () => {
  it('never sends a job whose deadline has passed: it expires with zero requests', async () => {
    const job = await enqueue('ord_old', clock.now() - 8 * DAY_MS);
    expect(await dispatcherWith().runOnce()).toMatchObject({ expired: 1 });
    expect(service.requests).toHaveLength(0);
    expect(await outbox.get(job.id)).toMatchObject({ state: 'expired' });
    expect(eventsNamed('expired')[0]?.reason).toMatch(/deadline .* passed/);
  });

  it('expires a job whose request failed past its deadline: no request leaves after it', async () => {
    const job = await enqueue('ord_1', clock.now() - 7 * DAY_MS + HOUR + 1_000); // deadline: 1 s from now
    service.script(CONFIRM_PATH, { status: 503 }, { status: 503 });
    service.onRequest(() => clock.advance(2_000)); // the first request takes "2 s"
    const dispatcher = dispatcherWith();
    await dispatcher.runOnce();
    clock.advance(60_000);
    expect(await dispatcher.drain()).toMatchObject({ claimed: 0 });
    expect(confirmRequests()).toHaveLength(1);
    expect(await outbox.get(job.id)).toMatchObject({ state: 'expired' });
    expect((await outbox.get(job.id))?.lastError).toContain('503');
  });

  it('caps backoff at the last chance, so a claim a poll late still sends it before the deadline, then expires', async () => {
    const job = await enqueue('ord_1', clock.now() - 7 * DAY_MS + HOUR + 60_000); // deadline: 60 s from now
    service.script(CONFIRM_PATH, { status: 503 }, { status: 503 });
    const dispatcher = dispatcherWith({ backoff: { baseMs: 600_000, maxMs: 600_000 }, random: () => 0.99 });
    await dispatcher.runOnce();
    const [retried] = eventsNamed('retried');
    // The last chance: the deadline less the send timeout and the poll interval (30 s + 1 s by default).
    expect(retried?.nextAttemptAt).toBe((job.deadline as number) - 31_000);
    expect(retried?.lastChance).toBe(true);
    clock.set((retried?.nextAttemptAt as number) + 1_000);
    await dispatcher.runOnce();
    expect(confirmRequests()).toHaveLength(2);
    expect(confirmRequests().every((r) => r.at > 0)).toBe(true);
    expect(await outbox.get(job.id)).toMatchObject({ state: 'expired' });
    expect(eventsNamed('expired')).toHaveLength(1);
  });
});

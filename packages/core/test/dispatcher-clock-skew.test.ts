/**
 * Clock skew (issue 22): a click stamped by a host whose clock runs ahead of the worker's carries a
 * deadline as far past the service's real window end. The worker sees the stamp in its future, sends the
 * job by its deadline moved back by that much, and warns once.
 */
import type { DispatcherEvents } from '@postback/core';
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

const MINUTE = 60_000;

describe('Dispatcher and clock skew', () => {
  it('sends a job whose click time lies in its future by its deadline moved back by that much, warning once', async () => {
    // The landing host's clock runs 4 minutes ahead (the outbox allows a click up to 5 minutes ahead).
    const job = await enqueue('ord_skew', clock.now() + 4 * MINUTE);
    const deadline = job.deadline as number;
    service.script(CONFIRM_PATH, { status: 503 }, { status: 503 });
    const dispatcher = dispatcherWith();
    const warnings: Array<DispatcherEvents['clock-skew']> = [];
    dispatcher.on('clock-skew', (payload) => warnings.push(payload));

    expect(await dispatcher.runOnce()).toMatchObject({ retried: 1 });
    clock.advance(MINUTE);
    expect(await dispatcher.runOnce()).toMatchObject({ retried: 1 });
    expect(warnings).toEqual([
      expect.objectContaining({ skewMs: 4 * MINUTE, stamp: 'clickedAt', deadline: deadline - 4 * MINUTE }),
    ]);
    expect(warnings[0]?.job.id).toBe(job.id);

    // Past the moved deadline, before the stamped one: the click's stamp has long passed, and the job
    // still expires without a request (on the stamped deadline it would go out 4 minutes late).
    clock.set(deadline - 2 * MINUTE);
    expect(await dispatcher.runOnce()).toMatchObject({ claimed: 1, expired: 1 });
    expect(confirmRequests()).toHaveLength(2);
    expect(await outbox.get(job.id)).toMatchObject({ state: 'expired' });
    expect(eventsNamed('expired')[0]?.reason).toContain(new Date(deadline - 4 * MINUTE).toISOString());
    expect(warnings).toHaveLength(1);
  });

  it('leaves a job stamped in the past (or within the tolerance) alone, and warns of nothing', async () => {
    const job = await enqueue('ord_ok', clock.now() + 1_000);
    const dispatcher = dispatcherWith();
    const warnings: unknown[] = [];
    dispatcher.on('clock-skew', (payload) => warnings.push(payload));
    clock.set((job.deadline as number) - MINUTE);
    expect(await dispatcher.runOnce()).toMatchObject({ delivered: 1 });
    expect(warnings).toEqual([]);
  });
});

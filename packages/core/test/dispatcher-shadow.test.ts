/**
 * Shadow mode at delivery: a Dispatcher records the jobs of an account in shadow mode (the store's
 * persisted setting) as they would be sent, with the request body it would have sent, and sends nothing;
 * once shadow mode ends with a decision to send, the same jobs go out as usual. Over real HTTP with the
 * scripted fake of the service; the memory outbox on a fake clock.
 */
import type { DispatcherEvents, OutboxShadow } from '@postback/core';
import { isShadowRecorded } from '@postback/core/store';
import { describe, expect, it } from 'vitest';
import {
  clock,
  confirmRequests,
  dispatcherWith,
  enqueue,
  outbox,
  setUpDispatcherHarness,
} from './dispatcher-harness.ts';

setUpDispatcherHarness();

const shadowOf = () => outbox.shadow as OutboxShadow;

describe('shadow mode', () => {
  it('records each job as it would be sent, with its request body, and sends nothing', async () => {
    await shadowOf().start({ all: true }, clock.now());
    const job = await enqueue('ord_shadow');
    const dispatcher = dispatcherWith();
    const shadowed: Array<DispatcherEvents['shadowed']> = [];
    dispatcher.on('shadowed', (event) => shadowed.push(event));
    expect(await dispatcher.drain()).toMatchObject({ claimed: 1, shadowed: 1, delivered: 0 });
    expect(confirmRequests()).toEqual([]);
    expect(isShadowRecorded((await outbox.get(job.id)) ?? job)).toBe(true);
    expect(shadowed).toEqual([
      expect.objectContaining({
        request: {
          path: '/v1/conversions/s2s',
          body: { click_token: job.clickToken, order_id: 'ord_shadow', value_micros: job.valueMicros },
        },
      }),
    ]);
    expect(JSON.stringify(shadowed)).not.toContain('TOPSECRET');
  });

  it('sends the recorded jobs shadow end decides to send, and only those, at the next claim', async () => {
    await shadowOf().start({ all: true }, clock.now());
    await enqueue('ord_billed');
    const dispatcher = dispatcherWith({ shadowRefreshMs: 60_000 });
    await dispatcher.drain();
    clock.advance(1_000);
    const from = clock.now();
    await enqueue('ord_unbilled');
    expect(await dispatcher.drain()).toMatchObject({ shadowed: 1 });
    await shadowOf().end({ all: true }, { now: clock.now(), sendCreatedFrom: from });
    // The Dispatcher still trusts its read of the settings (60 s): the store's own check sends it anyway.
    expect(await dispatcher.drain()).toMatchObject({ claimed: 1, delivered: 1, shadowed: 0 });
    expect(confirmRequests().map((r) => (r.body as { order_id: string }).order_id)).toEqual(['ord_unbilled']);
  });

  it('sees a shadow mode begun while it runs once its read of the settings is older than shadowRefreshMs', async () => {
    const dispatcher = dispatcherWith({ shadowRefreshMs: 5_000 });
    await enqueue('ord_before');
    expect(await dispatcher.drain()).toMatchObject({ delivered: 1 });
    await shadowOf().start({ account: null }, clock.now());
    clock.advance(5_000);
    await enqueue('ord_after');
    expect(await dispatcher.drain()).toMatchObject({ shadowed: 1, delivered: 0 });
    expect(confirmRequests()).toHaveLength(1);
  });

  it('gives a job back untried, never maybe applied, when the shadow settings cannot be read', async () => {
    const job = await enqueue('ord_blind');
    const broken = {
      ...outbox,
      shadow: {
        ...shadowOf(),
        settings: async () => {
          throw new Error('the database is down');
        },
      },
    };
    const errors: unknown[] = [];
    const dispatcher = dispatcherWith({ outbox: broken });
    dispatcher.on('error', ({ error }) => errors.push(error));
    expect(await dispatcher.runOnce()).toMatchObject({ claimed: 1, deferred: 1, delivered: 0, shadowed: 0 });
    expect(confirmRequests()).toEqual([]);
    expect(await outbox.get(job.id)).toMatchObject({ state: 'pending', attempts: 0, maybeAppliedAt: null });
    expect(errors).toHaveLength(1);
  });
});

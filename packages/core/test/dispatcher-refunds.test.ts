/**
 * The Dispatcher sending refunds after their confirmations, with the campaign the confirmation returned.
 * Real HTTP to a scripted fake of the ad service; set-up in `dispatcher-harness.ts`.
 */
import { describe, expect, it } from 'vitest';
import { dispatcherWith, enqueue, outbox, service, setUpDispatcherHarness } from './dispatcher-harness.ts';
import { CONFIRM_PATH, REFUND_PATH } from './fake-ad-service.ts';

setUpDispatcherHarness();

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

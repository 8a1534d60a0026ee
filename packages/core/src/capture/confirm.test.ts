/** confirmClickOrder: the order goes to the outbox with its click and, when given, its account. */
import { describe, expect, it } from 'vitest';
import { createMemoryOutbox } from '../queue/memory-outbox.ts';
import { JobValidationError } from '../queue/validation.ts';
import { confirmClickOrder } from './confirm.ts';

const click = { token: 'tok_abc_AbC-9', clickedAt: Date.now() - 60_000 };
const withClick = { click: async () => click };

describe('confirmClickOrder', () => {
  it('enqueues the order with its account; the same order id in another account is another order', async () => {
    const outbox = createMemoryOutbox();
    const a = await confirmClickOrder(withClick, outbox, {
      orderId: '1001',
      valueMicros: 5,
      account: 'shop-a',
    });
    const b = await confirmClickOrder(withClick, outbox, {
      orderId: '1001',
      valueMicros: 5,
      account: 'shop-b',
    });
    const none = await confirmClickOrder(withClick, outbox, { orderId: '1001', valueMicros: 5 });
    if (!a.enqueued || !b.enqueued || !none.enqueued) throw new Error('not enqueued');
    expect([a.result.job.account, b.result.job.account, none.result.job.account]).toEqual([
      'shop-a',
      'shop-b',
      null,
    ]);
    expect([a.result.created, b.result.created, none.result.created]).toEqual([true, true, true]);
  });

  it('a malformed account is a JobValidationError naming it', async () => {
    const outbox = createMemoryOutbox();
    const err = await confirmClickOrder(withClick, outbox, {
      orderId: '1',
      valueMicros: 5,
      account: '',
    }).catch((e) => e);
    expect(err).toBeInstanceOf(JobValidationError);
    expect(err.field).toBe('account');
  });

  it('enqueues nothing without a click', async () => {
    const outbox = createMemoryOutbox();
    const result = await confirmClickOrder({ click: async () => null }, outbox, {
      orderId: '1',
      valueMicros: 5,
      account: 'shop-a',
    });
    expect(result).toEqual({ enqueued: false, click: null, reason: 'no-click' });
    expect(await outbox.listJobs()).toEqual([]);
  });

  it('enqueues nothing when the request’s consent is refused, saying so, even with a click', async () => {
    const outbox = createMemoryOutbox();
    const refused = { click: async () => click, consent: async () => false };
    const result = await confirmClickOrder(refused, outbox, { orderId: '1', valueMicros: 5 });
    expect(result).toEqual({ enqueued: false, click: null, reason: 'no-consent' });
    expect(await outbox.listJobs()).toEqual([]);
    const given = { click: async () => click, consent: async () => true };
    expect(await confirmClickOrder(given, outbox, { orderId: '1', valueMicros: 5 })).toMatchObject({
      enqueued: true,
    });
  });
});

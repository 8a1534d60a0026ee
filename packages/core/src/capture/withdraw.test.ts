/** withdrawConsent: the click store forgets the click; the outbox cancels what was not sent, and names what may have charged. */
import { describe, expect, it } from 'vitest';
import { createMemoryOutbox } from '../queue/memory-outbox.ts';
import { JobValidationError } from '../queue/validation.ts';
import { createMemoryClickStore } from './memory-click-store.ts';
import { withdrawConsent } from './withdraw.ts';

const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const TOKEN = 'tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd';
const OTHER = 'tok_other_click_ABCDEFGHIJ';
const click = (token = TOKEN) => ({ token, clickedAt: T0 - 60_000 });

function setup() {
  const outbox = createMemoryOutbox({ now: () => T0 });
  const clickStore = createMemoryClickStore();
  return { outbox, clickStore };
}

describe('withdrawConsent', () => {
  it('deletes the click of the key and cancels the order’s confirmation not yet sent', async () => {
    const { outbox, clickStore } = setup();
    await clickStore.put('cust_1', click());
    const { job } = await outbox.confirm({ orderId: 'ord_1', valueMicros: 5, click: click() });
    const result = await withdrawConsent({ outbox, clickStore }, { key: 'cust_1', orderId: 'ord_1' });
    expect(result).toMatchObject({
      clickDeleted: true,
      orders: [{ outcome: 'cancelled', job: { id: job.id, state: 'cancelled' } }],
      mayHaveCharged: [],
    });
    expect(await clickStore.get('cust_1', T0)).toBeNull();
    expect(await outbox.claim({ now: T0 + 1, limit: 10, leaseMs: 1000 })).toEqual([]);
  });

  it('finds the confirmations of a click token only in the account given, and leaves the others', async () => {
    const { outbox } = setup();
    const shopA = await outbox.confirm({
      orderId: 'ord_1',
      valueMicros: 5,
      click: click(),
      account: 'shop-a',
    });
    await outbox.confirm({ orderId: 'ord_2', valueMicros: 5, click: click() });
    const kept = await outbox.confirm({ orderId: 'ord_3', valueMicros: 5, click: click(OTHER) });
    const result = await withdrawConsent({ outbox }, { token: TOKEN });
    expect(result.orders.map((o) => [o.job?.orderId, o.job?.account, o.outcome])).toEqual([
      ['ord_2', null, 'cancelled'],
    ]);
    const inA = await withdrawConsent({ outbox }, { token: TOKEN, account: 'shop-a' });
    expect(inA.orders.map((o) => [o.job?.orderId, o.job?.account, o.outcome])).toEqual([
      ['ord_1', 'shop-a', 'cancelled'],
    ]);
    const left = await outbox.claim({ now: T0 + 1, limit: 10, leaseMs: 1000 });
    expect(left.map((job) => job.id)).toEqual([kept.job.id]);
    expect(shopA.job.account).toBe('shop-a');
  });

  it('names a confirmation that may have charged and leaves it as it is', async () => {
    const { outbox } = setup();
    await outbox.confirm({ orderId: 'ord_1', valueMicros: 5, click: click() });
    const [claimed] = await outbox.claim({ now: T0, limit: 1, leaseMs: 1000 });
    if (claimed === undefined) throw new Error('nothing claimed');
    await outbox.complete(claimed, { now: T0, campaignId: 'cmp_1' });
    const result = await withdrawConsent({ outbox }, { orderId: 'ord_1' });
    expect(result.mayHaveCharged).toMatchObject([{ orderId: 'ord_1', state: 'delivered' }]);
    expect(result.orders).toMatchObject([{ outcome: 'may-have-charged' }]);
  });

  it('refuses a withdrawal naming no one, a malformed field, or one whose store is missing, naming the field', async () => {
    const { outbox, clickStore } = setup();
    const field = (promise: Promise<unknown>) =>
      promise.then(
        () => 'resolved',
        (error: unknown) => (error instanceof JobValidationError ? error.field : String(error)),
      );
    expect(await field(withdrawConsent({ outbox, clickStore }, {}))).toBe('input');
    expect(await field(withdrawConsent({ outbox, clickStore }, { key: '' }))).toBe('key');
    expect(await field(withdrawConsent({ outbox }, { token: 'a\r\nb' }))).toBe('token');
    expect(await field(withdrawConsent({ outbox }, { orderId: 'ord_1', account: '' }))).toBe('account');
    expect(await field(withdrawConsent({ outbox }, { key: 'cust_1' }))).toBe('clickStore');
    expect(await field(withdrawConsent({ clickStore }, { orderId: 'ord_1' }))).toBe('outbox');
    expect(await field(withdrawConsent({ outbox: { withdraw: outbox.withdraw } }, { token: TOKEN }))).toBe(
      'outbox',
    );
  });
});

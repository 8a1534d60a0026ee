/**
 * Consent reaches the order: the request's `consent` hook decides whether the click is kept (cookie,
 * store) and whether `confirmOrder` may enqueue from it, on every kind of request (a landing, a later page
 * with a cookie set while consent was given, a request with neither), asked once per request.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryOutbox } from '../queue/memory-outbox.ts';
import { confirmClickOrder } from './confirm.ts';
import { type CaptureOutcome, createClickCapture } from './engine.ts';
import { createMemoryClickStore } from './memory-click-store.ts';

const SECRET = 'engine-secret-0123456789-abcdefghijklm';
const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const TOKEN = 'tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd';
const ORDER = { orderId: 'ord_1', valueMicros: 5_000_000 };

function setup(withStore = false) {
  let asked = 0;
  const store = createMemoryClickStore();
  const capture = createClickCapture<Request>({
    secrets: [SECRET],
    now: () => T0,
    consent: (request) => {
      asked++;
      return request.headers.get('x-consent') === 'yes';
    },
    ...(withStore ? { store, key: (request: Request) => request.headers.get('x-customer') } : {}),
  });
  const handle = async (url: string, headers: Record<string, string> = {}): Promise<CaptureOutcome> => {
    const request = new Request(`https://shop.test${url}`, { headers });
    return capture.handle(request, request);
  };
  const outbox = createMemoryOutbox({ now: () => T0 });
  return { capture, handle, store, asked: () => asked, outbox };
}

const cookieOf = (outcome: CaptureOutcome) => (outcome.setCookie ?? '').split(';')[0] as string;

describe('consent and confirmOrder', () => {
  it('confirms nothing from a landing without consent, and confirms with it', async () => {
    const { handle, outbox } = setup();
    const refused = await handle(`/?click_token=${TOKEN}`);
    expect(await confirmClickOrder(refused.postback, outbox, ORDER)).toEqual({
      enqueued: false,
      click: null,
      reason: 'no-consent',
    });
    const given = await handle(`/?click_token=${TOKEN}`, { 'x-consent': 'yes' });
    expect(await confirmClickOrder(given.postback, outbox, ORDER)).toMatchObject({ enqueued: true });
  });

  it('confirms nothing from a cookie set while consent was given once the request refuses it', async () => {
    const { handle, outbox } = setup();
    const cookie = cookieOf(await handle(`/?click_token=${TOKEN}`, { 'x-consent': 'yes' }));
    const later = await handle('/checkout', { cookie });
    expect(await later.postback.click()).toEqual({ token: TOKEN, clickedAt: T0 });
    expect(await confirmClickOrder(later.postback, outbox, ORDER)).toMatchObject({ reason: 'no-consent' });
    expect(await outbox.listJobs()).toEqual([]);
  });

  it('answers no-consent on a request with no click at all when consent is refused, no-click when given', async () => {
    const { capture, handle, outbox, asked } = setup();
    const request = new Request('https://shop.test/checkout');
    const bare = capture.handle(request, request);
    expect(bare).not.toBeInstanceOf(Promise); // still synchronous, and the hook not yet asked
    expect(asked()).toBe(0);
    expect(await confirmClickOrder((bare as CaptureOutcome).postback, outbox, ORDER)).toMatchObject({
      reason: 'no-consent',
    });
    const given = await handle('/checkout', { 'x-consent': 'yes' });
    expect(await confirmClickOrder(given.postback, outbox, ORDER)).toMatchObject({ reason: 'no-click' });
    expect(asked()).toBe(2); // once per request, only when asked
  });

  it('puts nothing in the store without consent, and the store gives no click to a later order', async () => {
    const { handle, store, outbox } = setup(true);
    await handle(`/?click_token=${TOKEN}`, { 'x-customer': 'cust_1' });
    expect(await store.get('cust_1', T0)).toBeNull();
    const otherDevice = await handle('/checkout', { 'x-customer': 'cust_1', 'x-consent': 'yes' });
    expect(await confirmClickOrder(otherDevice.postback, outbox, ORDER)).toMatchObject({
      reason: 'no-click',
    });
  });

  it('asks the hook once per request however often consent is read', async () => {
    const { handle, asked } = setup();
    const outcome = await handle('/checkout', { 'x-consent': 'yes' });
    await Promise.all([outcome.postback.consent?.(), outcome.postback.consent?.()]);
    expect(asked()).toBe(1);
  });
});

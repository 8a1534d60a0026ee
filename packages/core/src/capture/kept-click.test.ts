/**
 * `keptClick()`: the click a shopper already held (signed cookie, click store), never a token of the
 * request's URL — what a route acting for the shopper (a consent withdrawal) must use.
 */
import { describe, expect, it } from 'vitest';
import { createClickCapture, keptClickOf } from './engine.ts';
import { createMemoryClickStore } from './memory-click-store.ts';

const SECRET = 'kept-click-secret-0123456789-abcdefghijk';
const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
const MINE = 'tok_mine_4kQ9xZ7pLm2Rv8sWc1Ny3Bd';
const THEIRS = 'tok_theirs_8sWc1Ny3Bd4kQ9xZ7pLm2';

const request = (url: string, cookie?: string) =>
  new Request(`https://shop.test${url}`, {
    method: 'POST',
    ...(cookie === undefined ? {} : { headers: { cookie } }),
  });

describe('keptClick', () => {
  it.each([
    ['with no store (the quick landing)', false],
    ['with a click store', true],
  ])('ignores a token in the URL of a cookie-less request %s', async (_name, withStore) => {
    const capture = createClickCapture<Request>({
      secrets: [SECRET],
      now: () => T0,
      ...(withStore ? { store: createMemoryClickStore(), key: () => 'cust_1' } : {}),
    });
    const forged = request(`/privacy/withdraw?click_token=${THEIRS}`);
    const outcome = await capture.handle(forged, forged);
    expect(await outcome.postback.click()).toMatchObject({ token: THEIRS }); // click() prefers the URL
    expect(await keptClickOf(outcome.postback)).toBeNull();
  });

  it('answers the signed cookie’s click, also on a request whose URL names another token', async () => {
    const capture = createClickCapture<Request>({ secrets: [SECRET], now: () => T0 });
    const landing = await capture.handle(request(`/?click_token=${MINE}`), request('/'));
    const cookie = (landing.setCookie ?? '').split(';')[0] as string;
    const plain = await capture.handle(request('/privacy/withdraw', cookie), request('/'));
    expect(await keptClickOf(plain.postback)).toEqual({ token: MINE, clickedAt: T0 });
    const mixed = request(`/privacy/withdraw?click_token=${THEIRS}`, cookie);
    const outcome = await capture.handle(mixed, mixed);
    expect(await keptClickOf(outcome.postback)).toEqual({ token: MINE, clickedAt: T0 });
  });

  it('answers the click the store kept for the shopper before this request, not one this request lands', async () => {
    const store = createMemoryClickStore();
    await store.put('cust_1', { token: MINE, clickedAt: T0 - 1_000 });
    const capture = createClickCapture<Request>({
      secrets: [SECRET],
      now: () => T0,
      store,
      key: () => 'cust_1',
    });
    const forged = request(`/privacy/withdraw?click_token=${THEIRS}`);
    const outcome = await capture.handle(forged, forged);
    expect(await keptClickOf(outcome.postback)).toEqual({ token: MINE, clickedAt: T0 - 1_000 });
  });

  it('answers null for a context made by hand without keptClick', async () => {
    expect(await keptClickOf({ click: async () => ({ token: THEIRS, clickedAt: T0 }) })).toBeNull();
    expect(await keptClickOf(undefined)).toBeNull();
  });
});

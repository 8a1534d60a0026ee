/**
 * What the server-framework adapters of click capture (Express 4 and 5, Koa 2 and 3) share in their tests:
 * a test shop on a real server (ephemeral port, real HTTP), the fetch helpers, and the HTTP-level tests
 * every adapter must pass ({@link sharedAdapterTests}). Each adapter's test file builds its own shop app,
 * calls {@link sharedAdapterTests} inside its per-version `describe`, and keeps its adapter-only tests.
 */
import type { Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import {
  type CaptureOptions,
  createMemoryClickStore,
  createMemoryOutbox,
  DAY_MS,
  type InvalidClickEvent,
  type Outbox,
} from '@postback/core';
import fc from 'fast-check';
import { expect, it, onTestFinished } from 'vitest';

/** A valid click token. */
export const TOKEN = 'tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd';
/** Another valid click token. */
export const TOKEN_2 = 'tok_second_click_ABCDEFGHIJ';
/** The shop clock's time when a shop starts. */
export const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);
/** The `valueMicros` the shop's `POST /orders/:id` confirms. */
export const ORDER_VALUE_MICROS = 12_340_000;

/** A running test shop. */
export interface Shop {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** What the middleware's `onInvalid` was told, in order. */
  invalid: InvalidClickEvent[];
  /** The outbox `POST /orders/:id` confirms into (on the shop's clock). */
  outbox: Outbox;
  /** Moves the shop's clock (the middleware's `now` and the outbox's) forward. */
  advance(ms: number): void;
  /** How many requests reached the app's own handlers. */
  routeCalls: number;
}

/**
 * Starts a test shop and closes its server when the current test finishes. `listen` builds the adapter's
 * app with `postback(options)` installed (options: `secret`, the shop's clock, `onInvalid` into
 * `shop.invalid`, then `extra`) and these handlers, then returns `app.listen(0, '127.0.0.1')`:
 * - `GET /click`: the click the middleware read, as JSON `{ click }`;
 * - `POST /orders/:id`: `confirmOrder(request, shop.outbox, { orderId: id, valueMicros: ORDER_VALUE_MICROS })`
 *   as JSON;
 * - `GET /plain` (and any other GET): sets the app's own cookie `theme=dark` and answers `ok`.
 *
 * The app's handlers count their calls in `shop.routeCalls`.
 */
export async function startShop<Req>(
  secret: string,
  extra: Partial<CaptureOptions<Req>>,
  listen: (options: CaptureOptions<Req>, shop: Shop) => Server,
): Promise<Shop> {
  let time = T0;
  const shop: Shop = {
    base: '',
    invalid: [],
    outbox: createMemoryOutbox({ now: () => time }),
    advance: (ms) => {
      time += ms;
    },
    routeCalls: 0,
  };
  const server = listen(
    { secrets: [secret], now: () => time, onInvalid: (e) => shop.invalid.push(e), ...extra },
    shop,
  );
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  await new Promise((resolve) => server.once('listening', resolve));
  shop.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return shop;
}

/** A GET that does not follow redirects, with `cookie` as the Cookie header when given. */
export const get = (url: string, cookie?: string) =>
  fetch(url, { headers: cookie ? { cookie } : {}, redirect: 'manual' });

/** The `Set-Cookie` headers of the click cookie in `response`. */
export const ours = (response: Response) =>
  response.headers.getSetCookie().filter((c) => c.startsWith('postback_click='));

/** The `name=value` of a `Set-Cookie` header, as a browser sends it back. */
export const pair = (setCookie: string | undefined) => (setCookie ?? '').split(';')[0] as string;

/**
 * Sends `GET <target> HTTP/1.1` with the request line written as it is (node:net, no URL parsing on the
 * way), and returns the status and the `Location` header of the answer.
 */
export function rawGet(base: string, target: string): Promise<{ status: number; location: string | null }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: shop.example\r\nConnection: close\r\n\r\n`);
    });
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    socket.on('error', reject);
    socket.on('end', () => {
      const head = data.slice(0, data.indexOf('\r\n\r\n')).split('\r\n');
      const status = Number(head[0]?.split(' ')[1]);
      const line = head.find((h) => h.toLowerCase().startsWith('location:'));
      resolve({ status, location: line === undefined ? null : line.slice('location:'.length).trim() });
    });
  });
}

/** Request targets that tried to turn the clean-URL redirect into a redirect to another site. */
export const FOREIGN_TARGETS = [
  `//evil.example/?click_token=${TOKEN}`,
  `/\\evil.example/?click_token=${TOKEN}`,
  `///evil.example/x?click_token=${TOKEN}`,
  `http://evil.example/x?click_token=${TOKEN}`,
  `https://evil.example?click_token=${TOKEN}&a=1`,
  `/%2F/evil.example?click_token=${TOKEN}`,
] as const;

/** A Location that stays on the origin the browser asked: one leading `/`, not followed by `/` or `\`. */
export function expectSameOrigin(location: string | null): void {
  expect(location).toMatch(/^\/(?![/\\])[\x21-\x7e]*$/);
  expect(new URL(location as string, 'https://shop.example').origin).toBe('https://shop.example');
}

/** An adapter's side of {@link sharedAdapterTests}. */
export interface AdapterUnderTest<Req> {
  /** Starts a shop with the adapter (see {@link startShop}), with `extra` capture options. */
  shop(extra?: Partial<CaptureOptions<Req>>): Promise<Shop>;
  /** A request header as the adapter's request (Express `req`, Koa `ctx`) gives it, for `consent` and `key`. */
  header(request: Req, name: string): string | undefined;
  /**
   * Request targets of {@link FOREIGN_TARGETS} the server refuses with 400 before the app runs
   * (@hono/node-server refuses a backslash in the path); the others must still redirect on the origin.
   */
  refusedTargets?: readonly string[];
}

/**
 * Registers, in the current `describe`, the HTTP-level tests every adapter passes: the signed cookie on a
 * landing and the click on the same request; the click from the cookie on later requests, next to the
 * app's own cookies; tampered and expired cookies (verified only when the click is read); without
 * consent no cookie, nothing in the store and no order confirmed; the click store across devices; `confirmOrder` once per order; a landing URL opened
 * again keeps the click's first time (cookie and store); the clean-URL redirect stays on the shop's
 * origin for any request target (raw request lines); and 200 for any query string and cookie header.
 */
export function sharedAdapterTests<Req>({ shop, header, refusedTargets = [] }: AdapterUnderTest<Req>): void {
  it('sets the signed cookie on a landing and serves the click to the same request', async () => {
    const s = await shop();
    const response = await get(`${s.base}/click?click_token=${TOKEN}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
    expect(ours(response)).toHaveLength(1);
    expect(ours(response)[0]).toMatch(
      /^postback_click=[A-Za-z0-9_-]{52}\.[A-Za-z0-9._~-]+; Max-Age=604800; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
    );
  });

  it('reads the click from the cookie on later requests and keeps the app’s own cookies', async () => {
    const s = await shop();
    const landing = await get(`${s.base}/plain?click_token=${TOKEN}`);
    expect(landing.headers.getSetCookie().map((c) => c.split('=')[0])).toEqual(['postback_click', 'theme']);
    s.advance(2 * DAY_MS);
    const later = await get(`${s.base}/click`, `theme=dark; ${pair(ours(landing)[0])}`);
    expect(await later.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
    expect(ours(later)).toEqual([]);
  });

  it('ignores an invalid token: the page answers 200, no cookie, and onInvalid hears of it', async () => {
    const s = await shop();
    for (const token of ['not%20a%20token', 'tooShort']) {
      const response = await get(`${s.base}/click?click_token=${token}`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ click: null });
      expect(ours(response)).toEqual([]);
    }
    expect(s.invalid).toMatchObject([
      { source: 'url', reason: 'characters' },
      { source: 'url', reason: 'too-short', value: 'tooShort' },
    ]);
  });

  it('ignores a tampered or expired cookie, and verifies nothing for a request that does not read the click', async () => {
    const s = await shop();
    const cookie = pair(ours(await get(`${s.base}/plain?click_token=${TOKEN}`))[0]);
    const tampered = `${cookie.slice(0, -2)}${cookie.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await get(`${s.base}/plain`, tampered)).status).toBe(200);
    expect(s.invalid).toEqual([]);
    expect(await (await get(`${s.base}/click`, tampered)).json()).toEqual({ click: null });
    expect(s.invalid).toEqual([{ source: 'cookie', reason: 'signature' }]);
    s.advance(7 * DAY_MS + 1);
    expect(await (await get(`${s.base}/click`, cookie)).json()).toEqual({ click: null });
    expect(s.invalid.at(-1)).toEqual({ source: 'cookie', reason: 'expired' });
  });

  it('without consent keeps the click nowhere and confirmOrder enqueues nothing, though this request sees it', async () => {
    const store = createMemoryClickStore();
    const s = await shop({
      consent: (request) => header(request, 'x-consent') === 'yes',
      store,
      key: (request) => header(request, 'x-customer') || null,
    });
    const customer = { 'x-customer': 'cust_nc' };
    const denied = await fetch(`${s.base}/click?click_token=${TOKEN}`, { headers: customer });
    expect(ours(denied)).toEqual([]);
    expect(await denied.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
    expect(await store.get('cust_nc', T0)).toBeNull();
    const order = (headers: Record<string, string>) =>
      fetch(`${s.base}/orders/ord_nc`, { method: 'POST', headers }).then((r) => r.json());
    expect(await order(customer)).toEqual({ enqueued: false, click: null, reason: 'no-consent' });

    const granted = await fetch(`${s.base}/click?click_token=${TOKEN}`, { headers: { 'x-consent': 'yes' } });
    expect(ours(granted)).toHaveLength(1);
    // Consent withdrawn after the cookie was set: the cookie's click confirms nothing either.
    const cookie = pair(ours(granted)[0]);
    expect(await order({ cookie })).toEqual({ enqueued: false, click: null, reason: 'no-consent' });
    expect(await s.outbox.getByOrder('ord_nc')).toEqual([]);
    expect(await order({ cookie, 'x-consent': 'yes' })).toMatchObject({ enqueued: true });
  });

  it('follows a logged-in shopper to another device through the click store', async () => {
    const store = createMemoryClickStore();
    const s = await shop({ store, key: (request) => header(request, 'x-customer') || null });
    await fetch(`${s.base}/plain?click_token=${TOKEN}`, { headers: { 'x-customer': 'cust_9' } });
    const otherDevice = await fetch(`${s.base}/click`, { headers: { 'x-customer': 'cust_9' } });
    expect(await otherDevice.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
  });

  it('confirmOrder enqueues one confirmation per order for a request with a click, and none without', async () => {
    const s = await shop();
    const cookie = pair(ours(await get(`${s.base}/plain?click_token=${TOKEN_2}`))[0]);
    const first = await (
      await fetch(`${s.base}/orders/ord_1`, { method: 'POST', headers: { cookie } })
    ).json();
    expect(first).toMatchObject({
      enqueued: true,
      click: { token: TOKEN_2, clickedAt: T0 },
      result: { created: true },
    });
    const again = await (
      await fetch(`${s.base}/orders/ord_1`, { method: 'POST', headers: { cookie } })
    ).json();
    expect(again).toMatchObject({ enqueued: true, result: { created: false } });
    const [job] = await s.outbox.getByOrder('ord_1');
    expect(job).toMatchObject({
      kind: 'confirm',
      clickToken: TOKEN_2,
      valueMicros: ORDER_VALUE_MICROS,
      clickedAt: T0,
      state: 'pending',
    });

    const organic = await (await fetch(`${s.base}/orders/ord_2`, { method: 'POST' })).json();
    expect(organic).toEqual({ enqueued: false, click: null, reason: 'no-click' });
    expect(await s.outbox.getByOrder('ord_2')).toEqual([]);
  });

  it('keeps the first time of a click whose landing URL is opened again with the same token', async () => {
    const s = await shop();
    const landing = await get(`${s.base}/plain?click_token=${TOKEN}`);
    const cookie = pair(ours(landing)[0]);
    s.advance(5 * DAY_MS);
    // Reload, restored tab, history: the same URL, with the cookie of the first landing.
    const again = await get(`${s.base}/click?click_token=${TOKEN}`, cookie);
    expect(await again.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
    // Not re-issued: the browser keeps the first cookie, which already expires with the window.
    expect(ours(again)).toEqual([]);
    s.advance(DAY_MS);
    const order = await (
      await fetch(`${s.base}/orders/ord_re`, { method: 'POST', headers: { cookie } })
    ).json();
    expect(order).toMatchObject({ enqueued: true, click: { token: TOKEN, clickedAt: T0 } });
    expect(await s.outbox.getByOrder('ord_re')).toMatchObject([{ clickedAt: T0 }]);
  });

  it('keeps the first time with a click store too, and a new token still replaces the click', async () => {
    const store = createMemoryClickStore();
    const s = await shop({ store, key: () => 'cust_1' });
    const landing = await get(`${s.base}/plain?click_token=${TOKEN}`);
    s.advance(5 * DAY_MS);
    const again = await get(`${s.base}/click?click_token=${TOKEN}`, pair(ours(landing)[0]));
    expect(await again.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
    // Another device (no cookie): the store still has day 0.
    const otherDevice = await get(`${s.base}/click?click_token=${TOKEN}`);
    expect(await otherDevice.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
    expect(await store.get('cust_1', T0 + 5 * DAY_MS)).toEqual({ token: TOKEN, clickedAt: T0 });
    // A new ad click is a new click: it replaces the old one (attribution 'last').
    const fresh = await get(`${s.base}/click?click_token=${TOKEN_2}`, pair(ours(landing)[0]));
    expect(await fresh.json()).toEqual({ click: { token: TOKEN_2, clickedAt: T0 + 5 * DAY_MS } });
    expect(ours(fresh)).toHaveLength(1);
    expect(await store.get('cust_1', T0 + 5 * DAY_MS)).toEqual({
      token: TOKEN_2,
      clickedAt: T0 + 5 * DAY_MS,
    });
  });

  it('with cleanUrl, redirects only to a path on the shop’s own origin, whatever the request target', async () => {
    const s = await shop({ cleanUrl: true });
    for (const target of FOREIGN_TARGETS) {
      const { status, location } = await rawGet(s.base, target);
      if (refusedTargets.includes(target)) {
        expect({ target, status, location }).toEqual({ target, status: 400, location: null });
        continue;
      }
      expect({ target, status }).toEqual({ target, status: 302 });
      expectSameOrigin(location);
    }
    expect(s.routeCalls).toBe(0);
  });

  it('answers 200 whatever the query string and cookie header', async () => {
    const s = await shop({ store: createMemoryClickStore(), key: () => 'k', onInvalid: () => {} });
    const queryChar = fc.constantFrom(
      ..."abcz09-._~!$&'()*+,;=:@/?%",
      '%zz',
      '%E0%A4',
      'click_token=',
      TOKEN,
      '%00',
    );
    const cookieChar = fc.constantFrom(...'abc09-_=; ,"', 'postback_click=', 'AAAA', TOKEN);
    await fc.assert(
      fc.asyncProperty(
        fc.array(queryChar, { maxLength: 12 }),
        fc.array(cookieChar, { maxLength: 12 }),
        async (q, c) => {
          const cookie = c.join('').trim();
          const response = await fetch(`${s.base}/click?${q.join('')}`, {
            headers: cookie ? { cookie } : {},
          });
          expect(response.status).toBe(200);
          await response.arrayBuffer();
        },
      ),
      { numRuns: 60 },
    );
  });
}

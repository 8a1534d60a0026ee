/**
 * The Express adapter on real servers (Express 4 and 5 side by side, ephemeral ports, real HTTP): the
 * cookie it sets, the click the route reads, the redirect, confirmOrder, and robustness to any input.
 */

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import {
  CaptureError,
  type CaptureOptions,
  createClickCookieCodec,
  createMemoryClickStore,
  createMemoryOutbox,
  DAY_MS,
  type InvalidClickEvent,
  type Outbox,
} from '@postback/core';
import express5 from 'express';
import express4 from 'express4';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { confirmOrder, postback } from './index.ts';

const SECRET = 'express-secret-0123456789-abcdefghijkl';
const TOKEN = 'tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd';
const TOKEN_2 = 'tok_second_click_ABCDEFGHIJ';
const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

interface Shop {
  base: string;
  invalid: InvalidClickEvent[];
  outbox: Outbox;
  advance(ms: number): void;
  routeCalls: number;
}

describe.each([
  ['Express 4', express4],
  ['Express 5', express5],
])('%s adapter', (_name, express) => {
  async function shop(
    extra: Partial<CaptureOptions<express5.Request>> = {},
    mount?: (app: express5.Express) => void,
  ): Promise<Shop> {
    let time = T0;
    const state: Shop = {
      base: '',
      invalid: [],
      outbox: createMemoryOutbox({ now: () => time }),
      advance: (ms) => {
        time += ms;
      },
      routeCalls: 0,
    };
    const app = express() as express5.Express;
    app.use(
      postback<express5.Request>({
        secrets: [SECRET],
        now: () => time,
        onInvalid: (e) => state.invalid.push(e),
        ...extra,
      }),
    );
    app.get('/click', async (req, res) => {
      state.routeCalls++;
      res.json({ click: await req.postback.click() });
    });
    app.get('/plain', (_req, res) => {
      state.routeCalls++;
      res.cookie('theme', 'dark');
      res.send('ok');
    });
    app.post('/orders/:id', async (req, res, next) => {
      try {
        const result = await confirmOrder(req, state.outbox, {
          orderId: String(req.params.id),
          valueMicros: 12_340_000,
        });
        res.json(result);
      } catch (error) {
        next(error);
      }
    });
    mount?.(app);
    const server = app.listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((resolve) => server.once('listening', resolve));
    state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return state;
  }

  const get = (url: string, cookie?: string) =>
    fetch(url, { headers: cookie ? { cookie } : {}, redirect: 'manual' });
  const ours = (response: Response) =>
    response.headers.getSetCookie().filter((c) => c.startsWith('postback_click='));
  const pair = (setCookie: string | undefined) => (setCookie ?? '').split(';')[0] as string;

  it('sets the signed cookie on a landing and serves the click to the route on the same request', async () => {
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

  it('accepts a cookie signed with Web Crypto (as an edge middleware signs it), though it signs with node:crypto', async () => {
    const s = await shop();
    const edge = createClickCookieCodec({
      secrets: [SECRET],
      confirmWindowMs: 7 * DAY_MS,
      tokenMinLength: 16,
      tokenMaxLength: 256,
    });
    const cookie = `postback_click=${await edge.encode({ token: TOKEN, clickedAt: T0 - 1000 })}`;
    expect(await (await get(`${s.base}/click`, cookie)).json()).toEqual({
      click: { token: TOKEN, clickedAt: T0 - 1000 },
    });
    const landing = await get(`${s.base}/plain?click_token=${TOKEN_2}`);
    const value = pair(ours(landing)[0]).slice('postback_click='.length);
    expect(await edge.decode(value, T0)).toEqual({ ok: true, click: { token: TOKEN_2, clickedAt: T0 } });
  });

  it('ignores an invalid token: the page answers 200, no cookie, and onInvalid hears of it', async () => {
    const s = await shop();
    const response = await get(`${s.base}/click?click_token=not%20a%20token`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ click: null });
    expect(ours(response)).toEqual([]);
    expect(s.invalid).toMatchObject([{ source: 'url', reason: 'characters' }]);
  });

  it('ignores a tampered or expired cookie, and verifies nothing for a route that does not read the click', async () => {
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

  it('redirects a landing to the clean URL with the cookie, under a mount path, without running the route', async () => {
    const s = await shop({ cleanUrl: true }, (app) => {
      const router = express.Router() as express5.Router;
      router.get('/shoes', (_req, res) => {
        res.send('shoes');
      });
      app.use('/shop', router);
    });
    const response = await get(`${s.base}/shop/shoes?size=42&click_token=${TOKEN}`);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/shop/shoes?size=42');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(ours(response)).toHaveLength(1);
    const page = await get(`${s.base}${response.headers.get('location')}`, pair(ours(response)[0]));
    expect(await page.text()).toBe('shoes');
  });

  it('without consent sets no cookie but still serves the click to this request', async () => {
    const s = await shop({ consent: (req) => req.headers['x-consent'] === 'yes' });
    const denied = await fetch(`${s.base}/click?click_token=${TOKEN}`);
    expect(ours(denied)).toEqual([]);
    expect(await denied.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
    const granted = await fetch(`${s.base}/click?click_token=${TOKEN}`, { headers: { 'x-consent': 'yes' } });
    expect(ours(granted)).toHaveLength(1);
  });

  it('follows a logged-in shopper to another device through the click store', async () => {
    const store = createMemoryClickStore();
    const s = await shop({ store, key: (req) => (req.headers['x-customer'] as string | undefined) ?? null });
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
      valueMicros: 12_340_000,
      clickedAt: T0,
      state: 'pending',
    });

    const organic = await (await fetch(`${s.base}/orders/ord_2`, { method: 'POST' })).json();
    expect(organic).toEqual({ enqueued: false, click: null });
    expect(await s.outbox.getByOrder('ord_2')).toEqual([]);
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
});

describe('Express adapter outside a request', () => {
  it('confirmOrder on a request the middleware never saw fails with CaptureError not-installed', async () => {
    await expect(
      confirmOrder({}, createMemoryOutbox(), { orderId: 'o', valueMicros: 1 }),
    ).rejects.toMatchObject({
      name: 'CaptureError',
      reason: 'not-installed',
    });
    await expect(
      confirmOrder({}, createMemoryOutbox(), { orderId: 'o', valueMicros: 1 }),
    ).rejects.toBeInstanceOf(CaptureError);
  });

  it('never shows its secrets when the middleware is inspected', () => {
    const middleware = postback({ secrets: [SECRET] });
    expect(inspect(middleware, { depth: Infinity, showHidden: true })).not.toContain(SECRET);
    expect(() => postback({ secrets: ['short'] })).toThrow(/secrets/);
  });
});

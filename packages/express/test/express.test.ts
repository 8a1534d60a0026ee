/**
 * The Express adapter on real servers (Express 4 and 5 side by side, ephemeral ports, real HTTP): the
 * cookie it sets, the click the route reads, the redirect, confirmOrder, and robustness to any input.
 */

import { once } from 'node:events';
import { inspect } from 'node:util';
import {
  CaptureError,
  type CaptureOptions,
  createClickCookieCodec,
  createMemoryClickStore,
  createMemoryOutbox,
  DAY_MS,
} from '@postback/core';
import express5 from 'express';
import express4 from 'express4';
import { describe, expect, it, vi } from 'vitest';
import {
  get,
  ORDER_VALUE_MICROS,
  ours,
  pair,
  sharedAdapterTests,
  startShop,
  T0,
  TOKEN,
  TOKEN_2,
} from '../../../test/helpers/capture-adapter-suite.ts';
import { confirmOrder, postback } from '../src/index.ts';

const SECRET = 'express-secret-0123456789-abcdefghijkl';

describe.each([
  ['Express 4', express4],
  ['Express 5', express5],
])('%s adapter', (_name, express) => {
  const shop = (
    extra: Partial<CaptureOptions<express5.Request>> = {},
    mount?: (app: express5.Express) => void,
  ) =>
    startShop<express5.Request>(SECRET, extra, (options, state) => {
      const app = express() as express5.Express;
      app.use(postback(options));
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
            valueMicros: ORDER_VALUE_MICROS,
          });
          res.json(result);
        } catch (error) {
          next(error);
        }
      });
      mount?.(app);
      return app.listen(0, '127.0.0.1');
    });

  // The landing cookie, later requests, tampered and expired cookies, consent, the click store across
  // devices, confirmOrder, and 200 for any input: the same tests as the Koa adapter's.
  sharedAdapterTests<express5.Request>({ shop, header: (req, name) => req.get(name) });

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

  it('hands a throw while applying a late landing to the error handlers, and the process serves on', async () => {
    const errors: unknown[] = [];
    const s = await startShop<express5.Request>(
      SECRET,
      {
        store: createMemoryClickStore(),
        // A slow visitor lookup that the app's request timeout outlives on /slow: the landing is applied
        // after the answer went out, and setting its cookie throws.
        key: async (req) => {
          if (req.originalUrl.startsWith('/slow') && req.res !== undefined && !req.res.writableFinished)
            await once(req.res, 'finish');
          return 'visitor-1';
        },
      },
      (options, state) => {
        const app = express() as express5.Express;
        app.use('/slow', (_req, res, next) => {
          setImmediate(() => res.status(503).send('timed out')); // as connect-timeout answers
          next();
        });
        app.use(postback(options));
        app.get('/click', async (req, res) => {
          state.routeCalls++;
          res.json({ click: await req.postback.click() });
        });
        app.use((error: unknown, _req: express5.Request, res: express5.Response, _next: () => void) => {
          errors.push(error);
          if (!res.headersSent) res.status(500).end();
        });
        return app.listen(0, '127.0.0.1');
      },
    );
    const late = await get(`${s.base}/slow?click_token=${TOKEN}`);
    expect([late.status, await late.text()]).toEqual([503, 'timed out']);
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(errors[0]).toMatchObject({ code: 'ERR_HTTP_HEADERS_SENT' });
    const next = await get(`${s.base}/click?click_token=${TOKEN_2}`);
    expect(await next.json()).toEqual({ click: { token: TOKEN_2, clickedAt: T0 } });
    expect(ours(next)).toHaveLength(1);
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

/**
 * The Hono adapter in process (`app.request()`) and on a real server (@hono/node-server, ephemeral port,
 * real HTTP): the cookie it adds to whatever the route returns (immutable `Response.redirect()`, a route's
 * own `Response` with cookies, `c.json`), the click the route reads, the redirect, confirmOrder, and
 * robustness to any input.
 */
import type { Server } from 'node:http';
import { inspect } from 'node:util';
import { serve } from '@hono/node-server';
import { type CaptureOptions, createMemoryOutbox } from '@postback/core';
import { type Context, Hono } from 'hono';
import { setCookie } from 'hono/cookie';
import { describe, expect, it } from 'vitest';
import {
  FOREIGN_TARGETS,
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
import { confirmOrder, type PostbackEnv, postback } from '../src/index.ts';

const SECRET = 'hono-secret-0123456789-abcdefghijklmnop';
const landing = `?click_token=${TOKEN}`;

/** The shop's routes (see `startShop`), plus routes that answer in every way a Hono route can. */
function shopApp(options: CaptureOptions<Context>, state = { routeCalls: 0, outbox: createMemoryOutbox() }) {
  const app = new Hono<PostbackEnv>();
  app.use(postback(options));
  app.get('/click', async (c) => {
    state.routeCalls++;
    return c.json({ click: await c.get('postback').click() });
  });
  app.post('/orders/:id', async (c) =>
    c.json(
      await confirmOrder(c, state.outbox, { orderId: c.req.param('id'), valueMicros: ORDER_VALUE_MICROS }),
    ),
  );
  app.get('/redirect', () => {
    state.routeCalls++;
    return Response.redirect('https://shop.example/elsewhere', 302);
  });
  app.get('/own-response', () => {
    state.routeCalls++;
    const headers = new Headers([
      ['set-cookie', 'theme=dark'],
      ['set-cookie', 'lang=fr'],
    ]);
    return new Response('ok', { headers });
  });
  app.get('/fails', () => {
    state.routeCalls++;
    throw new Error('route failed');
  });
  app.onError((_error, c) => c.text('error', 500));
  app.get('*', (c) => {
    state.routeCalls++;
    setCookie(c, 'theme', 'dark');
    return c.text('ok');
  });
  return app;
}

describe('Hono 4 adapter on a real server (@hono/node-server)', () => {
  const shop = (extra: Partial<CaptureOptions<Context>> = {}) =>
    startShop<Context>(SECRET, extra, (options, state) => {
      const app = shopApp(options, state);
      // Keep the platform's Response: node-server's own (by default global) has mutable redirect headers.
      return serve({
        fetch: app.fetch,
        port: 0,
        hostname: '127.0.0.1',
        overrideGlobalObjects: false,
      }) as Server;
    });

  // The landing cookie, later requests, tampered and expired cookies, consent, the click store across
  // devices, confirmOrder, the clean-URL redirect for raw request targets, and 200 for any input: the
  // same tests as the Express, Koa and Fastify adapters'.
  // @hono/node-server answers 400 to a backslash in the request path before Hono runs.
  sharedAdapterTests<Context>({
    shop,
    header: (c, name) => c.req.header(name),
    refusedTargets: FOREIGN_TARGETS.filter((target) => target.startsWith('/\\')),
  });

  it.each([
    ['returns Response.redirect() (immutable headers)', '/redirect', 302, ['postback_click']],
    ['returns its own Response with cookies', '/own-response', 200, ['postback_click', 'theme', 'lang']],
    ['throws (the error page)', '/fails', 500, ['postback_click']],
  ])('adds its cookie when the route %s, keeping the route’s', async (_how, path, status, names) => {
    const s = await shop();
    const response = await get(`${s.base}${path}${landing}`);
    expect(response.status).toBe(status);
    expect(response.headers.getSetCookie().map((c) => c.split('=')[0])).toEqual(names);
    const later = await get(`${s.base}/click`, pair(ours(response)[0]));
    expect(await later.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
  });
});

describe('Hono 4 adapter in process (app.request)', () => {
  let time = T0;
  const options = { secrets: [SECRET], now: () => time };

  it('serves the click to the landing request and sets the cookie through app.request()', async () => {
    const app = shopApp(options);
    const response = await app.request(`/click${landing}`);
    expect(await response.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
    expect(ours(response)).toHaveLength(1);
  });

  it('keeps Response.redirect()’s status and Location while adding the cookie to its immutable headers', async () => {
    const immutable = Response.redirect('https://shop.example/elsewhere', 302);
    expect(() => immutable.headers.append('set-cookie', 'a=b')).toThrow(TypeError);
    const response = await shopApp(options).request(`/redirect${landing}`);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://shop.example/elsewhere');
    expect(ours(response)).toHaveLength(1);
  });

  it('redirects a landing to the clean URL under a mounted sub-app, without running the route', async () => {
    let calls = 0;
    const shoes = new Hono<PostbackEnv>().get('/shoes', (c) => {
      calls++;
      return c.text('shoes');
    });
    const app = new Hono<PostbackEnv>();
    app.use(async (c, next) => {
      c.header('x-frame-options', 'DENY');
      await next();
    });
    app.use(postback({ ...options, cleanUrl: true }));
    app.route('/shop', shoes);
    const response = await app.request(`/shop/shoes?size=42&click_token=${TOKEN_2}`);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/shop/shoes?size=42');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(ours(response)).toHaveLength(1);
    expect(calls).toBe(0);
    const page = await app.request('/shop/shoes?size=42', { headers: { cookie: pair(ours(response)[0]) } });
    expect(await page.text()).toBe('shoes');
  });

  it('reads the click from the cookie with the first time, after the clock moved', async () => {
    const app = shopApp(options);
    const cookie = pair(ours(await app.request(`/plain${landing}`))[0]);
    time = T0 + 60_000;
    const later = await app.request('/click', { headers: { cookie } });
    expect(await later.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
    expect(ours(later)).toEqual([]);
    time = T0;
  });

  it('confirmOrder on a context the middleware never saw fails with CaptureError not-installed', async () => {
    const app = new Hono();
    app.post('/orders', async (c) =>
      c.json(await confirmOrder(c, createMemoryOutbox(), { orderId: 'o', valueMicros: 1 })),
    );
    let caught: unknown;
    app.onError((error, c) => {
      caught = error;
      return c.text('error', 500);
    });
    expect((await app.request('/orders', { method: 'POST' })).status).toBe(500);
    expect(caught).toMatchObject({ name: 'CaptureError', reason: 'not-installed' });
  });

  it('validates its options at once and never shows its secrets when inspected', () => {
    const middleware = postback({ secrets: [SECRET] });
    expect(inspect(middleware, { depth: Infinity, showHidden: true })).not.toContain(SECRET);
    expect(() => postback({ secrets: ['short'] })).toThrow(/secrets/);
  });
});

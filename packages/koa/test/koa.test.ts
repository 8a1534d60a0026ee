/**
 * The Koa adapter on real servers (Koa 2 and 3 side by side, ephemeral ports, real HTTP): the cookie it
 * sets, the click the app reads, the redirect, confirmOrder, and robustness to any input.
 */
import { inspect } from 'node:util';
import { type CaptureOptions, createMemoryOutbox } from '@postback/core';
import Koa3 from 'koa';
import Koa2 from 'koa2';
import { describe, expect, it } from 'vitest';
import {
  get,
  ORDER_VALUE_MICROS,
  ours,
  sharedAdapterTests,
  startShop,
  TOKEN,
} from '../../../test/helpers/capture-adapter-suite.ts';
import { confirmOrder, type PostbackState, postback } from '../src/index.ts';

const SECRET = 'koa-secret-0123456789-abcdefghijklmnop';

type Context = Koa3.ParameterizedContext<PostbackState>;

describe.each([
  ['Koa 2', Koa2],
  ['Koa 3', Koa3],
])('%s adapter', (_name, Koa) => {
  const shop = (extra: Partial<CaptureOptions<Context>> = {}) =>
    startShop<Context>(SECRET, extra, (options, state) => {
      const app = new Koa<PostbackState>() as Koa3<PostbackState>;
      app.use(postback(options));
      app.use(async (ctx) => {
        state.routeCalls++;
        if (ctx.path === '/click') ctx.body = { click: await ctx.state.postback.click() };
        else if (ctx.path.startsWith('/orders/') && ctx.method === 'POST') {
          ctx.body = await confirmOrder(ctx, state.outbox, {
            orderId: ctx.path.slice('/orders/'.length),
            valueMicros: ORDER_VALUE_MICROS,
          });
        } else {
          ctx.cookies.set('theme', 'dark');
          ctx.body = 'ok';
        }
      });
      return app.listen(0, '127.0.0.1');
    });

  // The landing cookie, later requests, tampered and expired cookies, consent, the click store across
  // devices, confirmOrder, and 200 for any input: the same tests as the Express adapter's.
  sharedAdapterTests<Context>({ shop, header: (ctx, name) => ctx.get(name) });

  it('redirects a landing to the clean URL with the cookie, without running the app', async () => {
    const s = await shop({ cleanUrl: true, cleanUrlStatus: 303 });
    const response = await get(`${s.base}/shoes?click_token=${TOKEN}&size=42`);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/shoes?size=42');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(ours(response)).toHaveLength(1);
    expect(s.routeCalls).toBe(0);
  });
});

describe('Koa adapter outside a request', () => {
  it('confirmOrder on a context the middleware never saw fails with CaptureError not-installed', async () => {
    await expect(
      confirmOrder({ state: {} }, createMemoryOutbox(), { orderId: 'o', valueMicros: 1 }),
    ).rejects.toMatchObject({
      name: 'CaptureError',
      reason: 'not-installed',
    });
  });

  it('never shows its secrets when the middleware is inspected', () => {
    const middleware = postback({ secrets: [SECRET] });
    expect(inspect(middleware, { depth: Infinity, showHidden: true })).not.toContain(SECRET);
    expect(() => postback({ secrets: ['short'] })).toThrow(/secrets/);
  });
});

/**
 * The Fastify adapter on real servers (ephemeral ports, real HTTP): the cookie it sets next to the
 * route's own (however the route sets them), the click the route reads, the redirect, confirmOrder, and
 * robustness to any input.
 */
import type { Server } from 'node:http';
import { inspect } from 'node:util';
import fastifyCookie from '@fastify/cookie';
import { type CaptureOptions, createMemoryClickStore, createMemoryOutbox } from '@postback/core';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import {
  get,
  ORDER_VALUE_MICROS,
  ours,
  pair,
  sharedAdapterTests,
  startShop,
  T0,
  TOKEN,
} from '../../../test/helpers/capture-adapter-suite.ts';
import { confirmOrder, postback } from '../src/index.ts';

const SECRET = 'fastify-secret-0123456789-abcdefghijkl';

/** Starts the Fastify app on an ephemeral port and hands `startShop` its Node server. */
const listen = (app: FastifyInstance): Server => {
  void app.listen({ port: 0, host: '127.0.0.1' });
  return app.server;
};

describe('Fastify 5 adapter', () => {
  const shop = (
    extra: Partial<CaptureOptions<FastifyRequest>> = {},
    mount?: (app: FastifyInstance) => void,
  ) =>
    startShop<FastifyRequest>(SECRET, extra, (options, state) => {
      const app = Fastify();
      app.register(fastifyCookie);
      app.register(postback, options);
      app.get('/click', async (request) => {
        state.routeCalls++;
        return { click: await request.postback.click() };
      });
      app.post<{ Params: { id: string } }>('/orders/:id', (request) =>
        confirmOrder(request, state.outbox, { orderId: request.params.id, valueMicros: ORDER_VALUE_MICROS }),
      );
      app.get('/set-cookie', (_request, reply) => {
        state.routeCalls++;
        reply.setCookie('theme', 'dark').setCookie('lang', 'fr');
        return 'ok';
      });
      app.get('/headers', (_request, reply) => {
        state.routeCalls++;
        reply.headers({ 'set-cookie': ['theme=dark', 'lang=fr'] });
        return 'ok';
      });
      app.get('/redirect', (_request, reply) => {
        state.routeCalls++;
        reply.header('set-cookie', 'theme=dark');
        return reply.redirect('/elsewhere', 303);
      });
      app.get('/fails', () => {
        state.routeCalls++;
        throw new Error('route failed');
      });
      app.get('/*', (_request, reply) => {
        state.routeCalls++;
        reply.header('set-cookie', 'theme=dark');
        return 'ok';
      });
      mount?.(app);
      return listen(app);
    });

  // The landing cookie, later requests, tampered and expired cookies, consent, the click store across
  // devices, confirmOrder, the clean-URL redirect for raw request targets (`//evil`, `/\evil`, absolute
  // form), and 200 for any input: the same tests as the Express and Koa adapters'.
  sharedAdapterTests<FastifyRequest>({
    shop,
    header: (request, name) => {
      const value = request.headers[name];
      return typeof value === 'string' ? value : undefined;
    },
  });

  it.each([
    ['reply.setCookie (@fastify/cookie)', '/set-cookie', ['postback_click', 'theme', 'lang']],
    ['reply.headers({ set-cookie: [...] })', '/headers', ['postback_click', 'theme', 'lang']],
    ['reply.header + reply.redirect', '/redirect', ['postback_click', 'theme']],
    ['a thrown error (500 page)', '/fails', ['postback_click']],
  ])('keeps both its cookie and the route’s when the route uses %s', async (_how, path, names) => {
    const s = await shop();
    const landing = await get(`${s.base}${path}?click_token=${TOKEN}`);
    expect(landing.headers.getSetCookie().map((c) => c.split('=')[0])).toEqual(names);
    const later = await get(`${s.base}/click`, pair(ours(landing)[0]));
    expect(await later.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
  });

  it('redirects a landing to the clean URL with the cookie, under a route prefix, without running the route', async () => {
    const s = await shop({ cleanUrl: true, cleanUrlStatus: 303 }, (app) => {
      app.register(
        async (shopRoutes) => {
          shopRoutes.get('/shoes', async () => {
            s.routeCalls++;
            return 'shoes';
          });
        },
        { prefix: '/shop' },
      );
    });
    const response = await get(`${s.base}/shop/shoes?size=42&click_token=${TOKEN}`);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/shop/shoes?size=42');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(ours(response)).toHaveLength(1);
    expect(s.routeCalls).toBe(0);
    const page = await get(`${s.base}${response.headers.get('location')}`, pair(ours(response)[0]));
    expect(await page.text()).toBe('shoes');
  });

  it('captures on a path no route matches (the 404 page) too', async () => {
    const s = await shop();
    const response = await fetch(`${s.base}/nowhere?click_token=${TOKEN}`, { method: 'PUT' });
    expect(response.status).toBe(404);
    expect(ours(response)).toHaveLength(1);
    expect(s.routeCalls).toBe(0);
  });

  it('hands a throw while applying an async landing to the error handler, as on the sync path; the process serves on', async () => {
    const errors: Error[] = [];
    // A store makes every landing async; another plugin's hook leaves `request.postback` a getter only on
    // /refused, so applying the landing throws there.
    const s = await startShop<FastifyRequest>(
      SECRET,
      { store: createMemoryClickStore(), key: () => 'visitor-1' },
      (options, state) => {
        const app = Fastify();
        app.addHook('onRequest', (request, _reply, done) => {
          if (request.url.startsWith('/refused'))
            Object.defineProperty(request, 'postback', { get: () => null, configurable: true });
          done();
        });
        app.register(postback, options);
        app.setErrorHandler((error: Error, _request, reply) => {
          errors.push(error);
          reply.code(500).send({ error: 'refused' });
        });
        app.get('/*', async (request) => {
          state.routeCalls++;
          return { click: await request.postback.click() };
        });
        return listen(app);
      },
    );
    const refused = await fetch(`${s.base}/refused?click_token=${TOKEN}`, {
      signal: AbortSignal.timeout(10_000),
    });
    expect(refused.status).toBe(500);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TypeError);
    const next = await get(`${s.base}/click?click_token=${TOKEN}`);
    expect(await next.json()).toEqual({ click: { token: TOKEN, clickedAt: T0 } });
    expect(ours(next)).toHaveLength(1);
    expect(s.routeCalls).toBe(1);
  });
});

describe('Fastify adapter outside a request', () => {
  it('confirmOrder on a request the plugin never saw fails with CaptureError not-installed', async () => {
    for (const request of [{}, { postback: null }]) {
      await expect(
        confirmOrder(request, createMemoryOutbox(), { orderId: 'o', valueMicros: 1 }),
      ).rejects.toMatchObject({ name: 'CaptureError', reason: 'not-installed' });
    }
  });

  it('reports invalid options from ready(), naming the option, and leaves Fastify its register options', async () => {
    const bad = Fastify();
    bad.register(postback, { secrets: ['short'] });
    await expect(bad.ready()).rejects.toThrow(/secrets/);
    const good = Fastify();
    good.register(postback, {
      secrets: [SECRET],
      prefix: '/x',
      logLevel: 'warn',
    } as CaptureOptions<FastifyRequest>);
    await expect(good.ready()).resolves.toBeDefined();
    await good.close();
  });

  it('decorates request.postback for routes in every encapsulated context and never shows its secrets', async () => {
    const app = Fastify();
    await app.register(postback, { secrets: [SECRET] });
    app.register(async (child) => {
      child.get('/child', async (request) => ({ click: await request.postback.click() }));
    });
    const response = await app.inject({ url: `/child?click_token=${TOKEN}` });
    expect(response.json()).toMatchObject({ click: { token: TOKEN } });
    expect(inspect(app, { depth: 6, showHidden: true })).not.toContain(SECRET);
    await app.close();
  });
});

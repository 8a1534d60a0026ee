/**
 * The child process of the surfaces fuzz test: serves ONE surface in ONE mount style, as its package's
 * README shows it, on an ephemeral loopback port. Run as
 * `node --conditions=@postback/source test/surfaces-fuzz/host.ts <surface>/<mount>`.
 *
 * Nothing here catches what the surface lets escape: Node's defaults stand, so an uncaught exception or
 * an unhandled rejection ends this process, exactly as it would end a shop's. Lines on stdout, one JSON
 * object each: `{ "ready": port }` once listening, then what the surface reports (`invalid` for capture's
 * `onInvalid`, `error` for its `onError`, `client-error` for metrics' `onClientError`).
 *
 * The capture mounts serve one page for every GET or HEAD: `click:<token>` when the request has a click,
 * else `none`; any other method gets the framework's 404.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { type CaptureOptions, type ClickContext, createMemoryOutbox, withPostback } from '@postback/core';
import { createDashboard } from '@postback/dashboard';
import { postback as expressPostback } from '@postback/express';
import { postback as fastifyPostback } from '@postback/fastify';
import { postback as honoPostback, type PostbackEnv } from '@postback/hono';
import { postback as koaPostback, type PostbackState } from '@postback/koa';
import {
  createPrometheusMetrics,
  metricsFetchHandler,
  metricsHandler,
  serveMetrics,
} from '@postback/metrics';
import { createPostback } from '@postback/next';
import { startSandbox } from '@postback/sandbox';
import express5 from 'express';
import express4 from 'express4';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import Koa2 from 'koa2';
import { NextRequest } from 'next/server.js';

/** The cookie secret of every capture mount (the test signs nothing itself). */
const SECRET = 'surfaces-fuzz-cookie-secret-0123456789abcdef';
/** The dashboard's token: replay and purge are enabled, as in a real deployment. */
const DASHBOARD_TOKEN = 'surfaces-fuzz-dashboard-token-0123';

const emit = (event: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(event)}\n`);
};

function captureOptions<R>(): CaptureOptions<R> {
  return {
    secrets: [SECRET],
    onInvalid: (event) => {
      const wellFormed = event.source === 'url' ? event.value.isWellFormed() : undefined;
      emit({ kind: 'invalid', source: event.source, reason: event.reason, wellFormed });
    },
    onError: (error) => emit({ kind: 'error', message: String(error) }),
  };
}

/** The page every capture mount serves: what the app would show, and whether the click reached it. */
const page = async (postback: ClickContext): Promise<string> => {
  const click = await postback.click();
  return click === null ? 'none' : `click:${click.token}`;
};
const isRead = (method: string | undefined) => method === 'GET' || method === 'HEAD';

const listening = (server: Server): Promise<number> =>
  new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });

/** A Fetch handler on Node, as Hono's README serves one (`@hono/node-server`). */
const serveFetch = (fetch: (request: Request) => Response | Promise<Response>): Promise<number> =>
  new Promise((resolve) => {
    serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
  });

function expressApp(create: typeof express5 | typeof express4): Promise<number> {
  const app = create();
  app.use(expressPostback(captureOptions()));
  app.use(async (req, res) => {
    if (!isRead(req.method)) {
      res.status(404).end();
      return;
    }
    res.send(await page(req.postback));
  });
  return listening(createServer(app));
}

function koaApp(create: typeof Koa | typeof Koa2): Promise<number> {
  const app = new create<PostbackState>();
  app.use(koaPostback(captureOptions()));
  app.use(async (ctx) => {
    if (isRead(ctx.method)) ctx.body = await page(ctx.state.postback);
  });
  return listening(createServer(app.callback()));
}

async function fastifyApp(): Promise<number> {
  const app = Fastify();
  await app.register(fastifyPostback, captureOptions());
  app.get('/*', async (request) => page(request.postback));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

function honoApp(): Promise<number> {
  const app = new Hono<PostbackEnv>();
  app.use(honoPostback(captureOptions()));
  app.get('*', async (c) => c.text(await page(c.get('postback'))));
  return serveFetch(app.fetch);
}

function fetchApp(): Promise<number> {
  const handler = withPostback(
    async (request, postback) =>
      isRead(request.method) ? new Response(await page(postback)) : new Response(null, { status: 404 }),
    captureOptions<Request>(),
  );
  return serveFetch(handler);
}

/**
 * Next's proxy, called the way `next start` calls it: with a `NextRequest` of the request's URL and
 * headers; its answer is applied as Next applies it (a redirect is sent as it is; `NextResponse.next()`
 * lets the request through to the route, with the overridden request headers and the proxy's cookies).
 * A target Next's own URL parsing refuses never reaches a proxy: this host answers it 400 as Next does.
 */
async function nextApp(): Promise<number> {
  const postback = createPostback(() => captureOptions<Request>());
  let origin = '';
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let request: NextRequest;
    try {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      }
      request = new NextRequest(new URL(req.url ?? '/', origin), { method: req.method, headers });
    } catch {
      res.statusCode = 400;
      res.end();
      return;
    }
    const answer = await postback.proxy(request);
    for (const cookie of answer.headers.getSetCookie()) res.appendHeader('set-cookie', cookie);
    const location = answer.headers.get('location');
    if (location !== null) {
      res.writeHead(answer.status, { location, 'cache-control': answer.headers.get('cache-control') ?? '' });
      res.end();
      return;
    }
    if (!isRead(req.method)) {
      res.statusCode = 404;
      res.end();
      return;
    }
    // The route: a route handler reads the click from its request (the forwarded click header).
    const routeHeaders = new Headers(request.headers);
    const override = answer.headers.get('x-middleware-override-headers');
    if (override !== null) {
      for (const name of override.split(',').filter(Boolean)) {
        const value = answer.headers.get(`x-middleware-request-${name}`);
        if (value !== null) routeHeaders.set(name, value);
      }
    }
    const click = await postback.getClickFromRequest(new Request(request.url, { headers: routeHeaders }));
    res.end(click === null ? 'none' : `click:${click.token}`);
  });
  const port = await listening(server);
  origin = `http://127.0.0.1:${port}`;
  return port;
}

function metricsOf() {
  const outbox = createMemoryOutbox();
  return createPrometheusMetrics({ dispatcher: { on: () => () => {}, state: 'running' }, outbox });
}
const onClientError = (error: { status: number | null; reason: string }) =>
  emit({ kind: 'client-error', status: error.status, reason: error.reason });

async function dashboardOf() {
  const outbox = createMemoryOutbox();
  await outbox.confirm({
    click: { token: 'tok_fuzz_0123456789abcdef', clickedAt: Date.now() },
    orderId: 'ord_1',
    valueMicros: 1_000_000,
  });
  return createDashboard({ outbox, token: DASHBOARD_TOKEN });
}

/** Each mount, by `<surface>/<mount>`. */
const MOUNTS: Record<string, () => Promise<number>> = {
  'capture/express5': () => expressApp(express5),
  'capture/express4': () => expressApp(express4),
  'capture/koa3': () => koaApp(Koa),
  'capture/koa2': () => koaApp(Koa2),
  'capture/fastify': fastifyApp,
  'capture/hono': honoApp,
  'capture/fetch': fetchApp,
  'capture/next': nextApp,
  'metrics/node': () => listening(createServer(metricsHandler(metricsOf(), { onClientError }))),
  'metrics/serve': async () => (await serveMetrics(metricsOf(), { port: 0, onClientError })).port,
  'metrics/fetch': () => serveFetch(metricsFetchHandler(metricsOf(), { onClientError })),
  'dashboard/node': async () => listening(createServer((await dashboardOf()).node)),
  'dashboard/express5': async () => {
    const dashboard = await dashboardOf();
    const app = express5();
    app.use('/ops/postback', dashboard.node);
    return listening(createServer(app));
  },
  'dashboard/express4': async () => {
    const dashboard = await dashboardOf();
    const app = express4();
    app.use('/ops/postback', dashboard.node);
    return listening(createServer(app));
  },
  'dashboard/koa': async () => {
    const dashboard = await dashboardOf();
    const app = new Koa();
    app.use(async (ctx, next) => {
      if (!/^\/ops\/postback(?:[/?]|$)/.test(ctx.url)) return next();
      ctx.respond = false;
      const body = (ctx.request as { body?: unknown }).body;
      await dashboard.node(Object.assign(ctx.req, { body }), ctx.res);
    });
    return listening(createServer(app.callback()));
  },
  'dashboard/fastify': async () => {
    const dashboard = await dashboardOf();
    const app = Fastify();
    app.all('/ops/postback*', (request, reply) => {
      reply.hijack();
      return dashboard.node(request.raw, reply.raw);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return (app.server.address() as AddressInfo).port;
  },
  'dashboard/fetch': async () => {
    const dashboard = await dashboardOf();
    return serveFetch((request) => dashboard.fetch(request));
  },
  'sandbox/server': async () => (await startSandbox()).port,
};

const mount = process.argv[2] ?? '';
const start = MOUNTS[mount];
if (start === undefined) {
  process.stderr.write(`unknown mount ${mount}; one of ${Object.keys(MOUNTS).join(', ')}\n`);
  process.exit(2);
}
emit({ ready: await start() });

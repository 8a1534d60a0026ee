/**
 * A host process for the hostile-request test: one dashboard over a memory outbox, mounted the ways its
 * README shows (bare Node, Express 4 and 5 with and without `express.json()`, Koa with and without a
 * body parser, Fastify, Hono, a
 * bare Fetch server), the one named by the first argument, on an ephemeral port under `/ops/` (the bare
 * ones at the root). No `unhandledRejection` handler: a promise the dashboard lets reach the host kills
 * this process, as it would kill a shop. Prints the base URL as one line once the server listens.
 *
 * Run: node --conditions=@postback/source mounts.ts express4
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { bodyParser } from '@koa/bodyparser';
import { createMemoryOutbox } from '@postback/core';
import { createDashboard } from '@postback/dashboard';
import express from 'express';
import express4 from 'express4';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';

const TOKEN = process.env.DASHBOARD_TOKEN ?? 'mounts-token-0123456789abcdef';
const outbox = createMemoryOutbox();
// Two dead jobs, for the replay and purge requests.
for (const orderId of ['dead-1', 'dead-2']) {
  const click = { token: `ct_${orderId}_0123456789abcdef`, clickedAt: Date.now() - 3_600_000 };
  await outbox.confirm({ orderId, valueMicros: 1_000_000, click });
}
for (const job of await outbox.claim({ now: Date.now(), limit: 10, leaseMs: 60_000 })) {
  await outbox.fail(job, { now: Date.now(), state: 'dead', reason: 'click_token not found' });
}
const dashboard = createDashboard({ outbox, token: TOKEN });

const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
const shop = 'the shop';

async function bare(): Promise<number> {
  return listen(createServer(dashboard.node));
}

async function expressApp(kind: 'express4' | 'express5', json: boolean): Promise<number> {
  const app = kind === 'express4' ? express4() : express();
  if (json) app.use(kind === 'express4' ? express4.json() : express.json());
  app.use('/ops', dashboard.node);
  app.get('/', (_req, res) => {
    res.send(shop);
  });
  return listen(createServer(app));
}

async function koa(parser: boolean): Promise<number> {
  const app = new Koa();
  if (parser) app.use(bodyParser());
  app.use(async (ctx, next) => {
    if (!/^\/ops(?:[/?]|$)/.test(ctx.url)) return next();
    ctx.respond = false;
    const body = (ctx.request as { body?: unknown }).body;
    await dashboard.node(Object.assign(ctx.req, { body }), ctx.res);
  });
  app.use((ctx) => {
    ctx.body = shop;
  });
  return listen(createServer(app.callback()));
}

async function fastify(): Promise<number> {
  const app = Fastify();
  app.all('/ops*', (request, reply) => {
    reply.hijack();
    return dashboard.node(Object.assign(request.raw, { body: request.body }), reply.raw);
  });
  app.get('/', () => shop);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

function fetchServer(fetch: (request: Request) => Response | Promise<Response>): Promise<number> {
  return new Promise((resolve) => {
    serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
  });
}

async function hono(): Promise<number> {
  const app = new Hono();
  app.all('/ops', (c) => dashboard.fetch(c.req.raw));
  app.all('/ops/*', (c) => dashboard.fetch(c.req.raw));
  app.get('/', (c) => c.text(shop));
  return fetchServer(app.fetch);
}

/** Each mount: how to start it, and its base path. */
const MOUNTS = {
  node: [bare, '/'],
  express4: [() => expressApp('express4', false), '/ops/'],
  express5: [() => expressApp('express5', false), '/ops/'],
  'express4-json': [() => expressApp('express4', true), '/ops/'],
  'express5-json': [() => expressApp('express5', true), '/ops/'],
  koa: [() => koa(false), '/ops/'],
  'koa-bodyparser': [() => koa(true), '/ops/'],
  fastify: [fastify, '/ops/'],
  hono: [hono, '/ops/'],
  fetch: [() => fetchServer(dashboard.fetch), '/'],
} as const satisfies Record<string, [() => Promise<number>, string]>;

const name = process.argv[2] as keyof typeof MOUNTS;
const mount = MOUNTS[name];
if (mount === undefined) throw new Error(`name a mount: ${Object.keys(MOUNTS).join(', ')}`);
const port = await mount[0]();
process.stdout.write(`http://127.0.0.1:${port}${mount[1]}\n`);

/**
 * Queues for the dashboard's tests: a SQLite outbox in a temp directory, filled through the outbox's
 * own transitions (claim, then complete, retry or fail with the attempt a Dispatcher would record), and
 * a served dashboard on an ephemeral port.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Job, Outbox } from '@postback/core';
import { createSqliteOutbox, type SqliteOutbox } from '@postback/sqlite';
import { createDashboard, type DashboardOptions } from '../src/index.ts';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
/** A token long enough for the dashboard, and easy to look for in answers. */
export const TOKEN = 'dashboard-token-0123456789abcdef';
/** Click tokens whose full text must never appear in any answer. */
export const CLICK_TOKEN = (n: number) => `ct_secret_click_token_${String(n).padStart(4, '0')}_zzz`;

/** A temp SQLite outbox (on a fixed clock when `now` is given). */
export function tempOutbox(now?: () => number): {
  outbox: SqliteOutbox;
  file: string;
  cleanup(): Promise<void>;
} {
  const dir = mkdtempSync(join(tmpdir(), 'postback-dashboard-'));
  const file = join(dir, 'postback.db');
  const outbox = createSqliteOutbox(now === undefined ? { filename: file } : { filename: file, now });
  return {
    outbox,
    file,
    async cleanup() {
      await outbox.close().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function claimOne(outbox: Outbox, orderId: string, now: number): Promise<Job> {
  const jobs = await outbox.claim({ now, limit: 100, leaseMs: 60_000 });
  const job = jobs.find((j) => j.orderId === orderId);
  if (job === undefined) throw new Error(`order ${orderId} was not claimable`);
  await outbox.release(
    jobs.filter((j) => j !== job),
    now,
  );
  return job;
}

/**
 * Fills `outbox` at time `now`: 3 delivered, 2 retried after 503s (pending), 3 dead after 404s (one
 * reason), 1 dead after a 422 (another), 1 pending whose deadline is 5 hours away (at risk).
 */
export async function fillQueue(outbox: Outbox, now: number): Promise<void> {
  let n = 0;
  const confirm = (orderId: string, clickedAt = now - HOUR) =>
    outbox.confirm({ orderId, valueMicros: 12_340_000, click: { token: CLICK_TOKEN(n++), clickedAt } });
  for (const id of ['ord-ok-1', 'ord-ok-2', 'ord-ok-3']) {
    await confirm(id);
    const job = await claimOne(outbox, id, now);
    const attempt = { startedAt: now, durationMs: 12, outcome: 'delivered', status: 200, detail: null };
    await outbox.complete(job, { now, campaignId: 'cmp_1', attempt });
  }
  for (const id of ['ord-retry-1', 'ord-retry-2']) {
    await confirm(id);
    const job = await claimOne(outbox, id, now);
    const detail = 'service unavailable';
    const attempt = { startedAt: now, durationMs: 30, outcome: 'transient', status: 503, detail };
    await outbox.retry(job, { now, nextAttemptAt: now + 10 * 60_000, error: detail, attempt });
  }
  for (const [i, id] of ['ord-dead-1', 'ord-dead-2', 'ord-dead-3'].entries()) {
    await confirm(id);
    const job = await claimOne(outbox, id, now);
    const reason = `no click with this token (request req_${1000 + i})`;
    const attempt = { startedAt: now, durationMs: 8, outcome: 'permanent', status: 404, detail: reason };
    await outbox.fail(job, { now, state: 'dead', reason, attempt });
  }
  await confirm('ord-bad-value');
  const bad = await claimOne(outbox, 'ord-bad-value', now);
  const reason = 'value_micros: must be at most 1000000000000';
  await outbox.fail(bad, {
    now,
    state: 'dead',
    reason,
    attempt: { startedAt: now, durationMs: 9, outcome: 'permanent', status: 422, detail: reason },
  });
  // Clicked 7 days minus 5 hours ago (less the safety margin): its window closes within 5 hours.
  await confirm('ord-at-risk', now - 7 * DAY + 5 * HOUR);
}

/**
 * Confirms one job per order (in `account`, when given) and makes them dead after a 404 with `reason`,
 * as a Dispatcher would; other due jobs are left pending.
 */
export async function deadJobs(
  outbox: Outbox,
  orders: { orderId: string; account?: string }[],
  reason: string,
  now: number,
): Promise<void> {
  for (const [n, { orderId, account }] of orders.entries()) {
    const click = { token: `ct_dead_${orderId}_${n}_0123456789`, clickedAt: now - HOUR };
    await outbox.confirm({
      orderId,
      valueMicros: 1_000,
      click,
      ...(account === undefined ? {} : { account }),
    });
  }
  const wanted = new Set(orders.map((o) => `${o.account ?? ''}/${o.orderId}`));
  // A claim takes a few jobs per account at a time: claim until every wanted job is dead, holding the
  // others until the end (a released job would come first again).
  const others: Job[] = [];
  for (let round = 0; wanted.size > 0 && round < 100; round++) {
    // Jobs confirmed on the real clock are due from their confirm, a little after `now`.
    const claimed = await outbox.claim({ now: Math.max(now, Date.now()), limit: 1_000, leaseMs: 60_000 });
    if (claimed.length === 0) break;
    for (const job of claimed) {
      const key = `${job.account ?? ''}/${job.orderId}`;
      if (!wanted.delete(key)) {
        others.push(job);
        continue;
      }
      const attempt = { startedAt: now, durationMs: 8, outcome: 'permanent', status: 404, detail: reason };
      await outbox.fail(job, { now, state: 'dead', reason, attempt });
    }
  }
  await outbox.release(others, now);
  if (wanted.size > 0) throw new Error(`could not claim ${[...wanted].join(', ')}`);
}

/**
 * A dashboard on 127.0.0.1: `http.createServer(dashboard.node)` at the root, Express or Koa under `/ops`,
 * or `dashboard.fetch` served by `@hono/node-server` at the root.
 */
export async function serveDashboard(
  options: DashboardOptions,
  mount: 'root' | 'express' | 'koa' | 'fetch' = 'root',
): Promise<{ url: string; close(): Promise<void> }> {
  const dashboard = createDashboard(options);
  let server: Server;
  let base = '/';
  if (mount === 'fetch') {
    const { serve } = await import('@hono/node-server');
    server = await new Promise<Server>((resolve) => {
      const served = serve(
        { fetch: (request) => dashboard.fetch(request), port: 0, hostname: '127.0.0.1' },
        () => resolve(served as Server),
      );
    });
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/`,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }
  if (mount === 'express') {
    const { default: express } = await import('express');
    const app = express();
    app.use('/ops', dashboard.node);
    app.get('/', (_req, res) => {
      res.send('the shop');
    });
    server = createServer(app);
    base = '/ops/';
  } else if (mount === 'koa') {
    // As the README shows it: no koa-mount, the path tested by hand, and Koa told not to answer itself.
    const { default: Koa } = await import('koa');
    const app = new Koa();
    app.use(async (ctx, next) => {
      if (!/^\/ops(?:[/?]|$)/.test(ctx.url)) return next();
      ctx.respond = false;
      await dashboard.node(ctx.req, ctx.res);
    });
    app.use((ctx) => {
      ctx.body = 'the shop';
    });
    server = createServer(app.callback());
    base = '/ops/';
  } else {
    server = createServer(dashboard.node);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${base}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

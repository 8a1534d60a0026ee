/**
 * Who may read and change the outbox through the dashboard, over real sockets: the `Host` rule against
 * DNS rebinding, wrong tokens throttled per client address (the right token refused during a lock-out),
 * reads behind the token when asked, actions that touch only the ids sent (never a recomputed group),
 * bad escapes and bad filters answered 400 as client errors, and a reason filter that never hands the
 * store an unbounded scan.
 */
import { request as httpRequest } from 'node:http';
import { createMemoryOutbox, type JobFilter, type Outbox } from '@postback/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DashboardRequestError, REASON_SCAN_WINDOW } from '../src/index.ts';
import { CLICK_TOKEN, fillQueue, HOUR, serveDashboard, TOKEN, tempOutbox } from './fixtures.ts';

let clock = Date.now();
let db: ReturnType<typeof tempOutbox>;
let server: Awaited<ReturnType<typeof serveDashboard>> | undefined;
const told: DashboardRequestError[] = [];
const onRequestError = (error: DashboardRequestError) => {
  told.push(error);
};

beforeEach(async () => {
  clock = Date.now();
  db = tempOutbox(() => clock);
  await fillQueue(db.outbox, clock);
  told.length = 0;
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  await db.cleanup();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: () => ReturnType<typeof JSON.parse>;
  text: string;
}

/** A request with full control of `Host` and of the client's address (fetch sets neither). */
function call(
  path: string,
  opts: { host?: string; from?: string; token?: string; method?: string; body?: unknown } = {},
): Promise<Answer> {
  if (server === undefined) throw new Error('no server');
  const url = new URL(path, server.url);
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: opts.method ?? (body === undefined ? 'GET' : 'POST'),
        localAddress: opts.from,
        headers: {
          host: opts.host ?? url.host,
          ...(opts.token === undefined ? {} : { authorization: `Bearer ${opts.token}` }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => {
          text += String(d);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the Host rule (DNS rebinding)', () => {
  it('on loopback answers only to loopback names and the allowed hosts: another name gets 421 and no job', async () => {
    server = await serveDashboard({ outbox: db.outbox, onRequestError });
    const port = new URL(server.url).port;
    const rebound = await call('api/jobs?state=dead', { host: `rebind.attacker.example:${port}` });
    expect(rebound.status).toBe(421);
    expect(rebound.text).not.toContain('ord-dead');
    expect((await call('', { host: `rebind.attacker.example:${port}` })).status).toBe(421);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', `[::1]:${port}`]) {
      expect((await call('api/overview', { host })).status, host).toBe(200);
    }
    expect((await call('api/overview', { host: 'ops.example.com' })).status).toBe(421);
    expect(told.at(-1)).toMatchObject({ kind: 'client', status: 421 });
    await server.close();

    server = await serveDashboard({ outbox: db.outbox, allowedHosts: ['Ops.Example.com'] });
    expect((await call('api/overview', { host: `ops.example.com:${port}` })).status).toBe(200);
    expect((await call('api/overview', { host: 'other.example.com' })).status).toBe(421);
  });

  it('holds a Fetch mount to allowedHosts when they are given, and refuses a Host that is no host (400)', async () => {
    server = await serveDashboard({ outbox: db.outbox, allowedHosts: ['ops.example.com'] }, 'fetch');
    expect((await call('api/overview', { host: 'ops.example.com' })).status).toBe(200);
    expect((await call('api/overview', { host: 'shop.example.com' })).status).toBe(421);
    expect((await call('api/overview', { host: 'a b' })).status).toBe(400);
  });
});

describe('wrong tokens', () => {
  it('lock an address out after 10, refusing even the right token until the lock-out ends; other addresses go on', async () => {
    server = await serveDashboard({ outbox: db.outbox, token: TOKEN, now: () => clock, onRequestError });
    for (let i = 0; i < 10; i++) {
      expect((await call('api/check', { body: {}, token: `wrong-token-${i}-0123456789` })).status).toBe(403);
    }
    const locked = await call('api/check', { body: {}, token: TOKEN });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBe(60);
    expect(told.at(-1)).toMatchObject({ kind: 'client', status: 429 });
    // Another client address is not locked out.
    expect((await call('api/check', { body: {}, token: TOKEN, from: '127.0.0.2' })).status).toBe(200);
    clock += 59_000;
    expect((await call('api/replay', { body: { ids: ['1'] }, token: TOKEN })).status).toBe(429);
    clock += 1_001;
    // A guesser goes on: the next run of wrong tokens locks it out for twice as long.
    for (let i = 0; i < 10; i++) await call('api/check', { body: {}, token: `wrong-again-${i}-0123456789` });
    expect((await call('api/check', { body: {}, token: TOKEN })).headers['retry-after']).toBe('120');
    clock += 61_000;
    expect((await call('api/check', { body: {}, token: TOKEN })).status).toBe(429);
    clock += 60_000;
    expect((await call('api/check', { body: {}, token: TOKEN })).status).toBe(200);
  });
});

describe('reads behind the token (tokenForReads)', () => {
  it('answers api reads only with the token (401 without, 403 wrong), and serves the page and its files to anyone', async () => {
    server = await serveDashboard({ outbox: db.outbox, token: TOKEN, tokenForReads: true });
    const without = await call('api/jobs?state=dead');
    expect(without.status).toBe(401);
    expect(without.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(without.text).not.toContain('ord-dead');
    expect((await call('api/overview', { token: `${TOKEN}x` })).status).toBe(403);
    expect((await call('api/jobs?state=dead', { token: TOKEN })).json().jobs).toHaveLength(4);
    expect((await call('')).status).toBe(200);
    expect((await call('assets/app.js')).status).toBe(200);
  });
});

describe('replay and purge act on the ids sent', () => {
  it('touch only the jobs of a group the page listed, not the jobs that died after in other accounts', async () => {
    server = await serveDashboard({ outbox: db.outbox, token: TOKEN, now: () => clock });
    const [group] = (await call('api/overview')).json().dead.groups;
    expect(group).toMatchObject({ status: 404, count: 3 });
    // 20 jobs of the same reason die in other accounts after the page was drawn.
    for (let n = 0; n < 20; n++) {
      const account = `shop-${n % 4}`;
      const click = { token: CLICK_TOKEN(100 + n), clickedAt: clock - HOUR };
      await db.outbox.confirm({ orderId: `late-${n}`, valueMicros: 1_000, click, account });
    }
    for (const job of await db.outbox.claim({ now: clock, limit: 100, leaseMs: 60_000 })) {
      if (!job.orderId.startsWith('late-')) {
        await db.outbox.release([job], clock);
        continue;
      }
      const reason = `no click with this token (request req_${job.orderId})`;
      const attempt = { startedAt: clock, durationMs: 8, outcome: 'permanent', status: 404, detail: reason };
      await db.outbox.fail(job, { now: clock, state: 'dead', reason, attempt });
    }
    expect((await call('api/overview')).json().dead.groups[0].count).toBe(23);
    // The group's key names no jobs: refused, nothing touched.
    expect((await call('api/purge', { token: TOKEN, body: { group: group.key } })).status).toBe(400);
    expect((await call('api/replay', { token: TOKEN, body: { group: group.key } })).status).toBe(400);
    expect((await db.outbox.stats(clock)).counts.dead).toBe(24);
    // The ids the page listed: exactly those 3.
    expect((await call('api/purge', { token: TOKEN, body: { ids: group.ids } })).json()).toEqual({
      purged: 3,
    });
    expect((await db.outbox.stats(clock)).counts.dead).toBe(21);
    const bad = await call('api/purge', { token: TOKEN, body: { ids: ['1', '1'] } });
    expect(bad.status).toBe(400);
  });
});

describe('malformed reads', () => {
  it('answer a bad escape or a bad filter with 400, logged as a client error, never as a store failure', async () => {
    server = await serveDashboard({ outbox: db.outbox, onRequestError });
    for (const path of [
      'api/jobs/%ZZ',
      'api/jobs/%ED%A0%80',
      `api/jobs?orderId=${'o'.repeat(300)}`,
      'api/jobs?offset=10001',
    ]) {
      const answer = await call(path);
      expect(answer.status, path).toBe(400);
      expect(answer.text).not.toMatch(/URIError|\n\s+at /);
    }
    expect(told.map((t) => t.kind)).toEqual(['client', 'client', 'client', 'client']);
    expect(told[2]?.message).toMatch(/orderId/);
  });
});

describe('the reason filter', () => {
  it('scans one bounded window of the list per request and says where to go on, never handing the store a reason scan', async () => {
    const memory = createMemoryOutbox();
    const now = Date.now();
    for (let i = 0; i < 2_500; i++) {
      await memory.confirm({
        orderId: `o-${i}`,
        valueMicros: 1_000,
        click: { token: CLICK_TOKEN(i), clickedAt: now - HOUR },
      });
    }
    const filters: JobFilter[] = [];
    const outbox = new Proxy(memory, {
      get: (target, key) =>
        key === 'listJobs'
          ? (filter: JobFilter) => {
              filters.push(filter);
              return target.listJobs(filter);
            }
          : Reflect.get(target, key),
    }) as Outbox;
    server = await serveDashboard({ outbox });
    const first = (await call('api/jobs?reason=nomatch')).json();
    expect(first).toMatchObject({ jobs: [], next: REASON_SCAN_WINDOW, scanned: REASON_SCAN_WINDOW });
    const second = (await call(`api/jobs?reason=nomatch&offset=${first.next}`)).json();
    expect(second.next).toBe(2 * REASON_SCAN_WINDOW);
    const last = (await call(`api/jobs?reason=nomatch&offset=${second.next}`)).json();
    expect(last).toMatchObject({ next: null, scanned: 500 });
    for (const filter of filters) {
      expect(filter.reason).toBeUndefined();
      expect(filter.limit).toBeLessThanOrEqual(REASON_SCAN_WINDOW);
    }
  });
});

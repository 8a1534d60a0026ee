/**
 * The dashboard's HTTP surface over real HTTP (Node's `http.createServer`, and Express under `/ops`):
 * the JSON API and its filters, the page and its files, the token rule for replay and purge, the
 * security headers, and that no answer holds a secret.
 */
import { readdirSync } from 'node:fs';
import { OptionsError } from '@postback/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY, createDashboard } from '../src/index.ts';
import { CLICK_TOKEN, fillQueue, HOUR, serveDashboard, TOKEN, tempOutbox } from './fixtures.ts';

const NOW = Date.now();
let db: ReturnType<typeof tempOutbox>;
let server: Awaited<ReturnType<typeof serveDashboard>> | undefined;
/** Every body answered in a test, checked for secrets after it. */
const bodies: string[] = [];

async function get(path: string, init?: RequestInit) {
  if (server === undefined) throw new Error('no server');
  const res = await fetch(new URL(path, server.url), { redirect: 'manual', ...init });
  const text = await res.text();
  bodies.push(text);
  return { res, text, json: () => JSON.parse(text) };
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  get(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const bearer = { authorization: `Bearer ${TOKEN}` };

beforeEach(async () => {
  db = tempOutbox(() => NOW);
  await fillQueue(db.outbox, NOW);
  bodies.length = 0;
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  await db.cleanup();
  for (const body of bodies) {
    expect(body).not.toContain(TOKEN);
    for (let n = 0; n < 20; n++) expect(body).not.toContain(CLICK_TOKEN(n));
  }
});

describe('the JSON API', () => {
  it('shows the counts by state, the at-risk count, the deadline bars and the dead jobs grouped by reason', async () => {
    server = await serveDashboard({ outbox: db.outbox, now: () => NOW });
    const o = (await get('api/overview')).json();
    expect(o.counts).toMatchObject({ delivered: 3, pending: 3, dead: 4, inflight: 0 });
    expect(o.total).toBe(10);
    expect(o.atRisk).toEqual({ count: 1, withinMs: 24 * HOUR });
    expect(o.deadline.map((b: { count: number }) => b.count)).toEqual([0, 1, 0, 0, 2, 0]);
    expect(o.deadline.map((b: { atRisk: boolean }) => b.atRisk)).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(o.dead.groups).toEqual([
      expect.objectContaining({ status: 404, reason: 'no click with this token (request <id>)', count: 3 }),
      expect.objectContaining({ status: 422, count: 1 }),
    ]);
    expect(o.writable).toBe(false);
  });

  it('lists jobs by state, status, reason text, order, deadline, most urgent first, with paging', async () => {
    server = await serveDashboard({ outbox: db.outbox, now: () => NOW });
    const ids = async (q: string) =>
      (await get(`api/jobs?${q}`)).json().jobs.map((j: { orderId: string }) => j.orderId);
    expect(await ids('state=dead')).toHaveLength(4);
    expect((await ids('state=dead&status=404')).sort()).toEqual(['ord-dead-1', 'ord-dead-2', 'ord-dead-3']);
    expect(await ids('reason=VALUE_MICROS')).toEqual(['ord-bad-value']);
    expect(await ids('reason=.*')).toEqual([]); // text, not a regular expression
    expect(await ids('orderId=ord-ok-2')).toEqual(['ord-ok-2']);
    expect(await ids(`state=pending&deadlineWithinMs=${6 * HOUR}`)).toEqual(['ord-at-risk']);
    expect((await ids('state=pending'))[0]).toBe('ord-at-risk');
    expect(await ids('state=dead&limit=3&offset=3')).toHaveLength(1);
    const [group] = (await get('api/overview')).json().dead.groups;
    const inGroup = (await get(`api/jobs?${new URLSearchParams({ group: group.key })}`)).json();
    expect(inGroup.jobs.map((j: { orderId: string }) => j.orderId).sort()).toEqual([
      'ord-dead-1',
      'ord-dead-2',
      'ord-dead-3',
    ]);
    expect(inGroup.group).toMatchObject({ status: 404, count: 3 });
    const bad = await get('api/jobs?state=lost');
    expect(bad.res.status).toBe(400);
    expect(bad.json().error).toMatch(/unknown state/);
  });

  it('shows one job with its attempts, the click token shortened and no lease token', async () => {
    server = await serveDashboard({ outbox: db.outbox, now: () => NOW });
    const [dead] = (await get('api/jobs?state=dead&status=404&limit=1')).json().jobs;
    const page = (await get(`api/jobs/${encodeURIComponent(dead.id)}`)).json();
    expect(page.job).toMatchObject({ id: dead.id, state: 'dead', clickToken: 'ct_sec…' });
    expect(page.job).not.toHaveProperty('lease');
    expect(page.attempts).toEqual([expect.objectContaining({ status: 404, outcome: 'permanent' })]);
    expect((await get('api/jobs/nope')).res.status).toBe(404);
  });

  it('counts and lists unmatched reversals, and shows where a reversal’s campaign came from', async () => {
    await db.outbox.refund({ orderId: 'ord_unmatched', campaignId: 'cmp_typo' });
    const [reversal] = (await db.outbox.claim({ now: NOW, limit: 100, leaseMs: 60_000 })).filter(
      (job) => job.orderId === 'ord_unmatched',
    );
    if (reversal === undefined) throw new Error('the reversal was not claimed');
    await db.outbox.fail(reversal, { now: NOW, state: 'unmatched', reason: 'no such conversion' });
    server = await serveDashboard({ outbox: db.outbox, now: () => NOW });
    expect((await get('api/overview')).json().counts).toMatchObject({ unmatched: 1 });
    const [listed] = (await get('api/jobs?state=unmatched')).json().jobs;
    expect(listed).toMatchObject({ orderId: 'ord_unmatched', state: 'unmatched' });
    const page = (await get(`api/jobs/${encodeURIComponent(reversal.id)}`)).json();
    expect(page.job).toMatchObject({ state: 'unmatched', campaignId: 'cmp_typo', campaignFrom: 'caller' });
    const format = (await get('assets/format.js')).text;
    expect(format).toContain("'unmatched'");
    expect(format).toContain('no such conversion at the service');
  });
});

describe('accounts', () => {
  it("filters jobs by account (or without one), shows each job's account, and lists paused accounts from heart-beats", async () => {
    server = await serveDashboard({ outbox: db.outbox, now: () => NOW });
    const click = (n: number) => ({ token: CLICK_TOKEN(n), clickedAt: NOW - HOUR });
    await db.outbox.confirm({ orderId: 'shop-1', valueMicros: 1_000, click: click(10), account: 'shop-a' });
    await db.outbox.confirm({ orderId: 'shop-1', valueMicros: 1_000, click: click(11), account: 'shop b' });
    const list = async (q: string) =>
      (await get(`api/jobs?${q}`))
        .json()
        .jobs.map((j: { orderId: string; account: string | null }) => [j.orderId, j.account]);
    expect(await list('account=shop-a')).toEqual([['shop-1', 'shop-a']]);
    expect(await list(`${new URLSearchParams({ account: 'shop b' })}`)).toEqual([['shop-1', 'shop b']]);
    expect(await list('account=nobody')).toEqual([]);
    const none = await list('noAccount=1&limit=1000');
    expect(none).toHaveLength(10);
    for (const [, account] of none) expect(account).toBeNull();
    const both = await get('api/jobs?account=shop-a&noAccount=1');
    expect(both.res.status).toBe(400);
    expect(both.json().error).toMatch(/account or noAccount/);
    expect((await get('api/jobs?account=%20%20')).res.status).toBe(400);

    const pause = (account: string | null, since: number, reason: string) => ({
      account,
      since,
      until: since + HOUR,
      reason,
      status: 401,
    });
    const beat = (workerId: string, state: string, pausedAccounts: ReturnType<typeof pause>[]) =>
      db.outbox.beat({
        workerId,
        at: NOW - 1_000,
        state,
        pausedUntil: null,
        pauseReason: null,
        version: '0.1.0',
        host: null,
        pid: null,
        pausedAccounts,
      });
    await beat('w1', 'running', [pause('shop b', NOW - 5 * 60_000, 'Ad service answered 401: bad key')]);
    await beat('w2', 'running', [
      pause('shop b', NOW - 4 * 60_000, 'Ad service answered 401: bad key'),
      pause(null, NOW - 60_000, 'no API key for account (no account)'),
    ]);
    await beat('w3', 'stopped', [pause('shop-a', NOW - 60_000, 'stale')]);
    const o = (await get('api/overview')).json();
    expect(o.pausedAccounts).toEqual([
      expect.objectContaining({
        account: 'shop b',
        status: 401,
        since: NOW - 5 * 60_000,
        workers: ['w1', 'w2'],
      }),
      expect.objectContaining({
        account: null,
        reason: 'no API key for account (no account)',
        workers: ['w2'],
      }),
    ]);
    expect(o.workers.find((w: { workerId: string }) => w.workerId === 'w2').pausedAccounts).toHaveLength(2);
  });
});

describe('is anyone delivering?', () => {
  it('flags open jobs with no worker beating within workerSeenWithinMs (stale or stopped beats do not count)', async () => {
    server = await serveDashboard({ outbox: db.outbox, now: () => NOW });
    const delivery = async () => (await get('api/overview')).json().delivery;
    expect(await delivery()).toEqual({
      heartbeats: true,
      liveWorkers: 0,
      seenWithinMs: 120_000,
      noWorker: true,
    });
    const beat = (workerId: string, at: number, state: string) =>
      db.outbox.beat({
        workerId,
        at,
        state,
        pausedUntil: null,
        pauseReason: null,
        version: '0.1.0',
        host: null,
        pid: null,
        pausedAccounts: [],
      });
    await beat('stale', NOW - 3 * 60_000, 'running');
    await beat('gone', NOW - 1_000, 'stopped');
    expect(await delivery()).toMatchObject({ liveWorkers: 0, noWorker: true });
    expect((await get('api/overview')).json().workers.map((w: { live: boolean }) => w.live)).toEqual([
      false,
      false,
    ]);
    await beat('live', NOW - 20_000, 'idle');
    expect(await delivery()).toMatchObject({ liveWorkers: 1, noWorker: false });
  });
});

describe('a backend that cannot list every state', () => {
  it('says which states it cannot list (400), and lists the others by default', async () => {
    const features = { ...db.outbox.features, listableStates: ['dead'] as const };
    const outbox = new Proxy(db.outbox, {
      get: (target, key) => (key === 'features' ? features : Reflect.get(target, key)),
    });
    server = await serveDashboard({ outbox });
    const pending = await get('api/jobs?state=pending');
    expect(pending.res.status).toBe(400);
    expect(pending.json().error).toBe('this backend cannot list pending jobs');
    const all = (await get('api/jobs')).json().jobs.map((j: { state: string }) => j.state);
    expect(new Set(all)).toEqual(new Set(['dead']));
  });
});

describe('replay and purge', () => {
  it('are refused with 403 when the dashboard was started without a token', async () => {
    server = await serveDashboard({ outbox: db.outbox });
    const res = await post('api/replay', { ids: ['x'] }, bearer);
    expect(res.res.status).toBe(403);
    expect((await post('api/purge', { ids: ['x'] }, bearer)).res.status).toBe(403);
  });

  it('are refused with 403 without the token, with a wrong one, or from another site', async () => {
    server = await serveDashboard({ outbox: db.outbox, token: TOKEN });
    const dead = (await get('api/jobs?state=dead')).json().jobs.map((j: { id: string }) => j.id);
    expect((await post('api/replay', { ids: dead })).res.status).toBe(403);
    expect((await post('api/replay', { ids: dead }, { authorization: `Bearer ${TOKEN}x` })).res.status).toBe(
      403,
    );
    expect(
      (await post('api/replay', { ids: dead }, { ...bearer, 'sec-fetch-site': 'cross-site' })).res.status,
    ).toBe(403);
    expect((await get(`api/replay?token=${TOKEN.slice(0, 4)}`)).res.status).toBe(405);
    expect((await db.outbox.stats(NOW)).counts.dead).toBe(4);
  });

  it("replay and purge the ids given (a reason group's listed ids), never a group key, never all at once", async () => {
    server = await serveDashboard({ outbox: db.outbox, token: TOKEN, now: () => NOW });
    expect((await get('api/overview')).json().writable).toBe(true);
    const [one] = (await get('api/jobs?state=dead&status=422')).json().jobs;
    expect((await post('api/replay', { ids: [one.id] }, bearer)).json()).toEqual({ replayed: 1 });
    expect((await db.outbox.get(one.id))?.state).toBe('pending');

    const [group] = (await get('api/overview')).json().dead.groups;
    expect((await post('api/purge', {}, bearer)).res.status).toBe(400);
    expect((await post('api/purge', { group: group.key }, bearer)).res.status).toBe(400);
    expect((await post('api/purge', { ids: group.ids }, bearer)).json()).toEqual({ purged: 3 });
    expect((await db.outbox.stats(NOW)).counts).toMatchObject({ dead: 0, pending: 4 });
    expect((await post('api/check', {}, bearer)).res.status).toBe(200);
  });
});

describe('the page', () => {
  it('is served with a strict Content-Security-Policy and other security headers on every answer', async () => {
    server = await serveDashboard({ outbox: db.outbox });
    for (const path of ['', 'assets/app.js', 'assets/style.css', 'api/overview', 'api/jobs', 'api/nope']) {
      const { res } = await get(path);
      expect(res.headers.get('content-security-policy'), path).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe');
    const html = (await get('')).text;
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=/);
    // Every module of the page is served from this origin, builds no HTML from text, and stays small.
    const modules = readdirSync(new URL('../public/', import.meta.url)).filter((f) => f.endsWith('.js'));
    expect(modules.length).toBeGreaterThan(5);
    for (const name of modules) {
      const { res, text } = await get(`assets/${name}`);
      expect(res.status, name).toBe(200);
      expect(res.headers.get('content-type'), name).toMatch(/javascript/);
      expect(text, name).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|eval\(/);
      // No address off the origin (the SVG namespace is a name, never fetched).
      expect(text.replaceAll('http://www.w3.org/2000/svg', ''), name).not.toMatch(/https?:\/\//);
      expect(text.split('\n').length, name).toBeLessThanOrEqual(400);
      for (const [, imported] of text.matchAll(/from '\.\/([^']+)'/g))
        expect(modules, name).toContain(imported);
    }
  });

  it('mounts in Express under a base path: the bare mount path redirects to itself with a slash', async () => {
    server = await serveDashboard({ outbox: db.outbox, token: TOKEN }, 'express');
    const bare = await get('/ops');
    expect(bare.res.status).toBe(308);
    expect(new URL(bare.res.headers.get('location') ?? '', new URL('/ops', server.url)).pathname).toBe(
      '/ops/',
    );
    expect((await get('')).text).toContain('assets/app.js');
    expect((await get('assets/app.js')).res.headers.get('content-type')).toMatch(/javascript/);
    expect((await get('api/overview')).json().counts.dead).toBe(4);
    expect((await post('api/replay', { ids: ['x'] })).res.status).toBe(403);
    expect((await get('/')).text).toBe('the shop');
  });
});

describe('in Koa', () => {
  it('serves the page, the API and the token rule under /ops, and leaves the other paths to the app', async () => {
    server = await serveDashboard({ outbox: db.outbox, token: TOKEN }, 'koa');
    expect((await get('/ops')).res.status).toBe(308);
    expect((await get('')).res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect((await get('api/overview')).json().counts.dead).toBe(4);
    const [group] = (await get('api/overview')).json().dead.groups;
    expect((await post('api/replay', { ids: group.ids })).res.status).toBe(403);
    expect((await post('api/replay', { ids: group.ids }, bearer)).json()).toEqual({ replayed: 3 });
    expect((await get('/')).text).toBe('the shop');
  });
});

describe('options', () => {
  it('refuse a short token and unknown options, naming them without echoing the token', () => {
    expect(() => createDashboard({ outbox: db.outbox, token: 'short' })).toThrow(OptionsError);
    expect(() => createDashboard({ outbox: db.outbox, token: 'short' })).toThrow(/token/);
    expect(() => createDashboard({ outbox: db.outbox, token: 'short' })).not.toThrow(/short/);
    expect(() => createDashboard({ outbox: db.outbox, tokn: TOKEN } as never)).toThrow(
      /tokn: unknown option/,
    );
  });
});

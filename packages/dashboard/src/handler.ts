/**
 * The dashboard as one Fetch-API handler: the page and its two static files, and a small JSON API over
 * the `Outbox` (overview, job list, one job with its attempts, replay, purge). Routes are matched on
 * the end of the path and the page only uses relative URLs, so the handler works under any base path,
 * whatever the framework strips before calling it.
 */
import { readFile } from 'node:fs/promises';
import { JOB_STATES, type JobFilter } from '@postback/core';
import { tokenCheck } from './auth.ts';
import { type DashboardOptions, parseDashboardOptions } from './options.ts';
import { deadGroups, jobFilter, jobView, overview, QueryError } from './views.ts';

/** The Content-Security-Policy of every answer: this origin's script and style only, nothing inline. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

/** The static files of the page (in `public/`), by the name the page asks for. */
const ASSETS: Record<string, { file: string; type: string }> = {
  'app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  'style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
  'icon.svg': { file: 'icon.svg', type: 'image/svg+xml' },
};

const PUBLIC_DIR = new URL('../public/', import.meta.url);
const cache = new Map<string, Promise<string>>();
const publicFile = (name: string) => {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFile(new URL(name, PUBLIC_DIR), 'utf8');
    cache.set(name, text);
  }
  return text;
};

/** Most jobs one replay or purge may name. */
const MAX_IDS = 1_000;

const answer = (body: string | null, status: number, type?: string, extra: Record<string, string> = {}) =>
  new Response(body, {
    status,
    headers: { ...SECURITY_HEADERS, ...(type === undefined ? {} : { 'content-type': type }), ...extra },
  });
const json = (value: unknown, status = 200) =>
  answer(JSON.stringify(value), status, 'application/json; charset=utf-8');
const problem = (status: number, error: string) => json({ error }, status);

/** A Fetch-API handler. */
export type DashboardHandler = (request: Request) => Promise<Response>;

/**
 * Creates the dashboard's Fetch-API handler. Read-only unless `token` is given; then `POST api/replay`
 * and `POST api/purge` need `Authorization: Bearer <token>` (403 otherwise).
 *
 * @throws {OptionsError} naming a bad or unknown option.
 * @example
 * ```ts
 * const handle = createDashboardHandler({ outbox, token: process.env.POSTBACK_DASHBOARD_TOKEN });
 * const response = await handle(new Request('http://localhost/ops/api/overview'));
 * ```
 */
export function createDashboardHandler(options: DashboardOptions): DashboardHandler {
  const o = parseDashboardOptions(options);
  const { outbox } = o;
  const now = o.now ?? Date.now;
  const allowed = tokenCheck(o.token);

  /** The ids a mutation names: `{ ids }`, or `{ group }` (a dead-jobs group's key). */
  async function targetIds(request: Request): Promise<string[] | Response> {
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return problem(400, 'the body must be JSON');
    }
    const { ids, group } = (body ?? {}) as { ids?: unknown; group?: unknown };
    if (
      Array.isArray(ids) &&
      ids.length > 0 &&
      ids.length <= MAX_IDS &&
      ids.every((i) => typeof i === 'string')
    ) {
      return ids as string[];
    }
    if (typeof group === 'string' && group !== '') {
      const found = (await deadGroups(outbox, o.maxGroupedDead)).groups.find((g) => g.key === group);
      return found?.ids ?? [];
    }
    return problem(400, `name the jobs: { "ids": [...] } (1 to ${MAX_IDS}) or { "group": "<key>" }`);
  }

  /** Refuses what may not change the outbox; null when the request may. */
  function refuseMutation(request: Request): Response | null {
    if (allowed === null) return problem(403, 'read-only: the dashboard was started without a token');
    const site = request.headers.get('sec-fetch-site');
    if (site !== null && site !== 'same-origin' && site !== 'none')
      return problem(403, 'cross-site request refused');
    if (!allowed(request.headers.get('authorization'))) return problem(403, 'a valid token is needed');
    if (!(request.headers.get('content-type') ?? '').startsWith('application/json')) {
      return problem(415, 'send application/json');
    }
    return null;
  }

  async function route(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname;
    const method = request.method;
    const read = method === 'GET' || method === 'HEAD';

    const api = /\/api\/([^/]+)(?:\/([^/]+))?$/.exec(path);
    if (api !== null) {
      const [, name, arg] = api;
      if (name === 'overview' && arg === undefined && read) {
        return json({ ...(await overview(outbox, o, now())), writable: allowed !== null });
      }
      if (name === 'jobs' && arg === undefined && read) {
        let filter: JobFilter;
        try {
          filter = jobFilter(url.searchParams, now());
        } catch (error) {
          if (error instanceof QueryError) return problem(400, error.message);
          throw error;
        }
        const group = url.searchParams.get('group');
        if (group !== null && group !== '') {
          // One reason group's dead jobs (the other criteria do not apply to a group).
          const found = (await deadGroups(outbox, o.maxGroupedDead)).groups.find((g) => g.key === group);
          const offset = filter.offset ?? 0;
          const page = (found?.ids ?? []).slice(offset, offset + (filter.limit ?? 50));
          const jobs = (await Promise.all(page.map((id) => outbox.get(id)))).filter((j) => j !== null);
          return json({ jobs: jobs.map(jobView), limit: filter.limit, offset, group: found ?? null });
        }
        // A store that cannot list some states (SQS lists only its dead-letter queue) says so, not "none".
        const listable = outbox.features.listableStates;
        const unlisted = (filter.states ?? []).filter((state) => !listable.includes(state));
        if (unlisted.length > 0) return problem(400, `this backend cannot list ${unlisted.join(', ')} jobs`);
        if (filter.states === undefined && listable.length < JOB_STATES.length) filter.states = listable;
        const jobs = await outbox.listJobs(filter);
        return json({ jobs: jobs.map(jobView), limit: filter.limit, offset: filter.offset });
      }
      if (name === 'jobs' && arg !== undefined && read) {
        const id = decodeURIComponent(arg);
        const job = await outbox.get(id);
        if (job === null) return problem(404, 'no such job');
        const attempts = await outbox.history(id);
        return json({ job: jobView(job), attempts, attemptHistory: outbox.features.attemptHistory });
      }
      if ((name === 'replay' || name === 'purge' || name === 'check') && arg === undefined) {
        if (method !== 'POST') return answer(null, 405, undefined, { allow: 'POST' });
        const refused = refuseMutation(request);
        if (refused !== null) return refused;
        if (name === 'check') return json({ ok: true });
        const ids = await targetIds(request);
        if (ids instanceof Response) return ids;
        if (name === 'replay')
          return json({ replayed: ids.length === 0 ? 0 : await outbox.replay({ ids }, now()) });
        // Always with ids: `purgeDead()` without them would delete every dead job.
        return json({ purged: ids.length === 0 ? 0 : await outbox.purgeDead({ ids }) });
      }
      return problem(read ? 404 : 405, read ? 'no such endpoint' : 'method not allowed');
    }

    const asset = /\/assets\/([^/]+)$/.exec(path);
    if (asset !== null) {
      const spec = ASSETS[asset[1] ?? ''];
      if (spec === undefined || !read) return problem(404, 'no such file');
      return answer(method === 'HEAD' ? null : await publicFile(spec.file), 200, spec.type);
    }

    if (!read) return problem(405, 'method not allowed');
    if (path === '' || path.endsWith('/')) {
      return answer(
        method === 'HEAD' ? null : await publicFile('index.html'),
        200,
        'text/html; charset=utf-8',
      );
    }
    // The mount path without its slash: the page's relative URLs need it, so redirect relatively.
    const last = path.slice(path.lastIndexOf('/') + 1);
    if (last.includes('.')) return problem(404, 'not found');
    // `./` keeps the target path-relative whatever the segment holds (`http:` alone must not read as a scheme).
    return answer(null, 308, undefined, { location: `./${last}/${url.search}` });
  }

  return async (request) => {
    try {
      return await route(request);
    } catch (error) {
      // A store's message may name hosts or files: the operator reads it in the server's log, not the page.
      console.error('postback dashboard: a request failed', error);
      return problem(500, 'the outbox could not answer; see the server log');
    }
  };
}

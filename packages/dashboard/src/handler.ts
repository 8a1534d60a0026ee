/**
 * The dashboard as one Fetch-API handler: the page and its static files, and a small JSON API over the
 * `Outbox` (overview, job list, one job with its attempts, replay, purge, a decision on held orders). Routes are matched on the end
 * of the path and the page only uses relative URLs, so the handler works under any base path, whatever
 * the framework strips before calling it. Nothing a client sends rejects the handler's promise: a
 * request's own fault is a 4xx (a client error), and only the store failing is a 500.
 */

import { JobValidationError } from '@postback/core';
import { type Access, createAccess, type RequestContext } from './access.ts';
import { actionIds, isJobId } from './action-body.ts';
import { createActivity } from './activity.ts';
import { answer, ClientError, json, problem, refusal } from './answers.ts';
import { assetName, servePage } from './assets.ts';
import { heldProblemOf } from './held-body.ts';
import { decideHeld } from './held-decisions.ts';
import { jobsPage } from './job-list.ts';
import { purgeWithLedger, replayWithLedger } from './ledger-actions.ts';
import { type DashboardOptions, parseDashboardOptions, type ResolvedDashboardOptions } from './options.ts';
import { readTarget } from './request-target.ts';
import { jobView, overview } from './views.ts';

export type { RequestContext } from './access.ts';

/**
 * A Fetch-API handler. `context` tells what a Fetch server may know besides the request: the client's
 * address (for the token throttle) and the address the request arrived on (a loopback one turns the
 * `Host` rule on); the Node adapter fills both in.
 */
export type DashboardHandler = (request: Request, context?: RequestContext) => Promise<Response>;

/** Statuses answered without a log line: a job that is not there, a page asking whether it needs the token. */
const QUIET = new Set([401, 404]);

/** A job id from the path: a bad `%` escape, or one that decodes to something that is no id, is a 400. */
function jobId(segment: string): string {
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    throw new ClientError(400, 'the job id is not a valid escape');
  }
  if (!isJobId(id)) throw new ClientError(400, 'not a job id');
  return id;
}

/** The JSON API (`…/api/<name>[/<arg>]`). */
async function api(
  o: ResolvedDashboardOptions,
  access: Access,
  activity: ReturnType<typeof createActivity>,
  request: Request,
  context: RequestContext,
  [name, arg]: [string, string | undefined],
): Promise<Response> {
  const { outbox } = o;
  const now = o.now ?? Date.now;
  const method = request.method;
  if (name === 'held-send' || name === 'held-drop') {
    if (arg !== undefined) throw new ClientError(404, 'no such endpoint');
    if (method !== 'POST') return answer(null, 405, undefined, { allow: 'POST' });
    access.change(request, context);
    const problem = await heldProblemOf(request);
    const decision = name === 'held-send' ? 'send' : 'drop';
    return json(await decideHeld(outbox, problem, decision, now(), o.tokenName));
  }
  if (name === 'replay' || name === 'purge' || name === 'check') {
    if (arg !== undefined) throw new ClientError(404, 'no such endpoint');
    if (method !== 'POST') return answer(null, 405, undefined, { allow: 'POST' });
    access.change(request, context);
    if (name === 'check') return json({ ok: true, refreshMs: o.refreshMs });
    const ids = await actionIds(request);
    // Only these jobs, and only those still dead: the stores act on dead jobs among the ids given.
    if (name === 'replay') return json({ replayed: await replayWithLedger(outbox, ids, now(), o.tokenName) });
    return json({ purged: await purgeWithLedger(outbox, ids, now(), o.tokenName) });
  }
  if (method !== 'GET' && method !== 'HEAD') {
    throw new ClientError(405, 'method not allowed', { allow: 'GET, HEAD' });
  }
  access.read(request, context);
  if (name === 'overview' && arg === undefined) {
    const view = await overview(outbox, o, activity, now());
    return json({
      ...view,
      writable: access.writable,
      tokenForReads: o.tokenForReads,
      refreshMs: o.refreshMs,
    });
  }
  if (name === 'jobs' && arg === undefined) {
    return json(await jobsPage(outbox, new URL(request.url).searchParams, o.maxGroupedDead, now()));
  }
  if (name === 'jobs' && arg !== undefined) {
    const id = jobId(arg);
    const job = await outbox.get(id);
    if (job === null) throw new ClientError(404, 'no such job');
    const attempts = await outbox.history(id);
    return json({ job: jobView(job), attempts, attemptHistory: outbox.features.attemptHistory });
  }
  throw new ClientError(404, 'no such endpoint');
}

/**
 * Creates the dashboard's Fetch-API handler. Read-only unless `token` is given; then `POST api/replay`,
 * `POST api/purge`, `POST api/held-send` and `POST api/held-drop` need `Authorization: Bearer <token>`
 * (403 otherwise).
 *
 * @throws {OptionsError} naming a bad or unknown option.
 * @example
 * ```ts
 * const handle = createDashboardHandler({ outbox, token: process.env.POSTBACK_DASHBOARD_TOKEN });
 * const response = await handle(new Request('http://localhost/ops/api/overview'));
 * ```
 */
export function createDashboardHandler(options: DashboardOptions): DashboardHandler {
  return handlerOf(parseDashboardOptions(options));
}

/**
 * The handler for options already validated (`createDashboard` validates them once for both handlers).
 *
 * @example
 * ```ts
 * const handle = handlerOf(parseDashboardOptions({ outbox }));
 * ```
 */
export function handlerOf(o: ResolvedDashboardOptions): DashboardHandler {
  const access = createAccess(o, o.now ?? Date.now);
  const activity = createActivity();

  const tell = (...args: Parameters<typeof o.onRequestError>) => {
    try {
      o.onRequestError(...args);
    } catch {
      // A logger that throws must not turn a refusal into a crash.
    }
  };

  async function route(request: Request, context: RequestContext): Promise<Response> {
    access.host(request, context);
    const url = new URL(request.url);
    // What a Fetch server hands over was parsed already (dot segments resolved); the rest is checked here.
    const { path, search } = readTarget(`${url.pathname}${url.search}`);
    const apiPath = /\/api\/([^/]+)(?:\/([^/]+))?$/.exec(path);
    if (apiPath !== null) {
      return api(o, access, activity, request, context, [apiPath[1] ?? '', apiPath[2]]);
    }
    const method = request.method;
    if (method !== 'GET' && method !== 'HEAD') {
      throw new ClientError(405, 'method not allowed', { allow: 'GET, HEAD' });
    }
    const asset = /\/assets\/([^/]+)$/.exec(path);
    if (asset !== null) {
      const name = assetName(asset[1] ?? '');
      if (name === null) throw new ClientError(404, 'no such file');
      return servePage(name, method);
    }
    if (path === '' || path.endsWith('/')) return servePage('index.html', method);
    // The mount path without its slash: the page's relative URLs need it, so redirect relatively.
    const last = path.slice(path.lastIndexOf('/') + 1);
    if (last.includes('.')) throw new ClientError(404, 'not found');
    // `./` keeps the target path-relative whatever the segment holds (`http:` alone must not read as a scheme).
    return answer(null, 308, undefined, { location: `./${last}/${search}` });
  }

  return async (request, context = {}) => {
    try {
      return await route(request, context);
    } catch (error) {
      const refused =
        error instanceof ClientError
          ? error
          : error instanceof JobValidationError
            ? new ClientError(400, error.message)
            : null;
      if (refused !== null) {
        if (!QUIET.has(refused.status))
          tell({ kind: 'client', status: refused.status, message: refused.message });
        return refusal(refused);
      }
      // A store's message may name hosts or files: the operator reads it in the server's log, not the page.
      tell({ kind: 'store', status: 500, message: 'a read or change of the outbox failed', cause: error });
      return problem(500, 'the outbox could not answer; see the server log');
    }
  };
}

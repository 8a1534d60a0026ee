/**
 * @postback/dashboard — a web page for operators over any `Outbox`: jobs by state, open jobs by time
 * left to their deadline (at-risk ones highlighted), dead jobs grouped by reason, a filtered job list,
 * each job's attempts, delivered and failed jobs over time, and — with a token — replay and purge of
 * the jobs shown. A Fetch-API handler plus a Node adapter.
 */
import { type DashboardHandler, handlerOf } from './handler.ts';
import { type NodeDashboardHandler, toNodeHandler } from './node.ts';
import { type DashboardOptions, parseDashboardOptions } from './options.ts';

export { MAX_ACTION_IDS, MAX_BODY_BYTES } from './action-body.ts';
export {
  ACTIVITY_BUCKET_MS,
  ACTIVITY_BUCKETS,
  type ActivityBucket,
  type ActivitySeries,
} from './activity.ts';
export { CONTENT_SECURITY_POLICY } from './answers.ts';
export { createDashboardHandler, type DashboardHandler, type RequestContext } from './handler.ts';
export { isLoopbackAddress, parseHost } from './host-check.ts';
export { MAX_JOBS_OFFSET, REASON_SCAN_WINDOW } from './job-list.ts';
export { type NodeDashboardHandler, type NodeRequest, toNodeHandler } from './node.ts';
export {
  type DashboardOptions,
  DEFAULT_DEADLINE_BUCKETS_MS,
  DEFAULT_MAX_GROUPED_DEAD,
  DEFAULT_MAX_TOKEN_FAILURES,
  DEFAULT_REFRESH_MS,
  DEFAULT_TOKEN_LOCKOUT_MS,
  DEFAULT_TOKEN_NAME,
  DEFAULT_WORKER_SEEN_WITHIN_MS,
  dashboardOptionsSchema,
  MIN_TOKEN_LENGTH,
  type ResolvedDashboardOptions,
  renderDashboardOptionsTable,
} from './options.ts';
export { type DashboardRequestError, logRequestError } from './request-log.ts';
export { MAX_PATH_LENGTH } from './request-target.ts';
export { TOKEN_THROTTLE_MAX_CLIENTS } from './token-throttle.ts';
export {
  type DeadGroup,
  type HeldView,
  type JobView,
  jobView,
  normaliseReason,
  type PausedAccountView,
  pausedAccounts,
  shortToken,
} from './views.ts';

/** The dashboard: a Fetch-API handler, and the same as a Node `(req, res)` handler. */
export interface Dashboard {
  /**
   * For Fetch-API servers (Hono, Bun, Deno, Next route handlers). The optional second argument gives the
   * client's address (for the token throttle) and the address the request arrived on.
   */
  fetch: DashboardHandler;
  /**
   * For `http.createServer`, Express, Koa (`ctx.req, ctx.res`), Fastify (`request.raw, reply.raw`, with
   * `request.body` as `body`). Its promise never rejects.
   */
  node: NodeDashboardHandler;
}

/**
 * Creates the dashboard over `outbox`. Read-only unless `token` is given.
 *
 * @throws {OptionsError} naming a bad or unknown option.
 * @example
 * ```ts
 * import { createDashboard } from '@postback/dashboard';
 * const dashboard = createDashboard({ outbox, token: process.env.POSTBACK_DASHBOARD_TOKEN });
 * app.use('/ops', dashboard.node); // Express
 * ```
 */
export function createDashboard(options: DashboardOptions): Dashboard {
  const o = parseDashboardOptions(options);
  const fetch = handlerOf(o);
  return { fetch, node: toNodeHandler(fetch, { onRequestError: o.onRequestError }) };
}

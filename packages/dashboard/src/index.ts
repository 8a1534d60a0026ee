/**
 * @postback/dashboard — a web page for operators over any `Outbox`: jobs by state, open jobs by time
 * left to their deadline (at-risk ones highlighted), dead jobs grouped by reason, a filtered job list,
 * each job's attempts, and — with a token — replay and purge. A Fetch-API handler plus a Node adapter.
 */
import { createDashboardHandler, type DashboardHandler } from './handler.ts';
import { type NodeDashboardHandler, toNodeHandler } from './node.ts';
import type { DashboardOptions } from './options.ts';

export { CONTENT_SECURITY_POLICY, createDashboardHandler, type DashboardHandler } from './handler.ts';
export { type NodeDashboardHandler, type NodeRequest, toNodeHandler } from './node.ts';
export {
  type DashboardOptions,
  DEFAULT_DEADLINE_BUCKETS_MS,
  DEFAULT_MAX_GROUPED_DEAD,
  dashboardOptionsSchema,
  MIN_TOKEN_LENGTH,
  type ResolvedDashboardOptions,
  renderDashboardOptionsTable,
} from './options.ts';
export {
  type DeadGroup,
  type JobView,
  jobView,
  normaliseReason,
  type PausedAccountView,
  pausedAccounts,
  shortToken,
} from './views.ts';

/** The dashboard: a Fetch-API handler, and the same as a Node `(req, res)` handler. */
export interface Dashboard {
  /** For Fetch-API servers (Hono, Bun, Deno, Next route handlers). */
  fetch: DashboardHandler;
  /** For `http.createServer`, Express, Koa (`ctx.req, ctx.res`), Fastify (`request.raw, reply.raw`). */
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
  const fetch = createDashboardHandler(options);
  return { fetch, node: toNodeHandler(fetch) };
}

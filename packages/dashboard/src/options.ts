/**
 * The dashboard's options: one zod schema (unknown keys refused) that is the single source of their
 * types, defaults and validation, and the README table rendered from it.
 */
import { DEFAULT_AT_RISK_WITHIN_MS, type Outbox } from '@postback/core';
import { documented, parseOptions, renderOptionsTable } from '@postback/core/store';
import { z } from 'zod';
import { type DashboardRequestError, logRequestError } from './request-log.ts';

/**
 * Upper bounds of the deadline chart's bars (time left to an open job's deadline): <1h, <6h, <24h, <3d,
 * <7d. Jobs with more time left fall in a last bar, "later".
 * @defaultValue [1h, 6h, 24h, 3d, 7d]
 */
export const DEFAULT_DEADLINE_BUCKETS_MS: readonly number[] = Object.freeze([
  3_600_000,
  6 * 3_600_000,
  24 * 3_600_000,
  3 * 86_400_000,
  7 * 86_400_000,
]);

/**
 * The actor of the ledger rows written by a dashboard's replays and purges when no `tokenName` is given.
 * @defaultValue "dashboard"
 */
export const DEFAULT_TOKEN_NAME = 'dashboard';

/**
 * Shortest token accepted: a token guards replay and purge, so it must not be guessable.
 * @defaultValue 16
 */
export const MIN_TOKEN_LENGTH = 16;

/**
 * How many dead jobs the reason groups are built from (the newest are read first page by page).
 * @defaultValue 1_000
 */
export const DEFAULT_MAX_GROUPED_DEAD = 1_000;

/**
 * Wrong tokens one client address may send before it is locked out.
 * @defaultValue 10
 */
export const DEFAULT_MAX_TOKEN_FAILURES = 10;

/**
 * First lock-out of an address that sent too many wrong tokens; each lock-out in a row doubles it.
 * @defaultValue 60_000 (1 min)
 */
export const DEFAULT_TOKEN_LOCKOUT_MS = 60_000;

/**
 * How often the page redraws itself (0: never; the operator can pause it).
 * @defaultValue 5_000 (5 s)
 */
export const DEFAULT_REFRESH_MS = 5_000;

/**
 * A worker whose last heart-beat is older than this is not counted as delivering (a worker beats every
 * 30 s by default; `postback status --worker-seen-within` uses the same default).
 * @defaultValue 120_000 (2 min)
 */
export const DEFAULT_WORKER_SEEN_WITHIN_MS = 120_000;

/** A host name as `allowedHosts` takes it: a DNS name or an address, no port. */
const hostName = z
  .string()
  .transform((v) => v.toLowerCase().replace(/\.$/, ''))
  .refine(
    (v) => /^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/.test(v) || /^\[[0-9a-f:.]+\]$/.test(v),
    'must be host names without a port (e.g. "ops.example.com")',
  );

const positiveMs = () => z.number().int().positive();

/**
 * The schema of {@link DashboardOptions}.
 *
 * @example
 * ```ts
 * const resolved = dashboardOptionsSchema.parse({ outbox });
 * ```
 */
export const dashboardOptionsSchema = z
  .strictObject({
    outbox: documented(
      z.custom<Outbox>(
        (v) =>
          typeof v === 'object' &&
          v !== null &&
          ['stats', 'listJobs', 'history', 'get', 'replay', 'purgeDead'].every(
            (m) => typeof (v as Record<string, unknown>)[m] === 'function',
          ),
        'must implement the Outbox interface',
      ),
      'Outbox',
      'required',
      'The store to show: SQLite, Postgres, SQS or memory.',
    ),
    token: documented(
      z.string().min(MIN_TOKEN_LENGTH, `must be at least ${MIN_TOKEN_LENGTH} characters`).optional(),
      'string',
      '—',
      `Enables replay and purge for requests carrying \`Authorization: Bearer <token>\` (at least ${MIN_TOKEN_LENGTH} characters). Without it the dashboard is read-only.`,
    ),
    tokenName: documented(
      z.string().min(1).max(200).default(DEFAULT_TOKEN_NAME),
      'string',
      '`"dashboard"` (`DEFAULT_TOKEN_NAME`)',
      "Who the token's holder is in the ledger: each replay and purge taken through this dashboard writes a ledger row with this name as its actor (`postback ledger`). Give each operator's dashboard its own name.",
    ),
    tokenForReads: documented(
      z.boolean().default(false),
      'boolean',
      '`false`',
      'Every `api/` read needs the token too (401 without it); the page asks for it first. Needs `token`. For a dashboard reachable beyond loopback without a login of your own in front.',
    ),
    allowedHosts: documented(
      z.array(hostName).max(100).default([]),
      'string[]',
      '`[]`',
      'Host names (without port) this dashboard answers to besides `localhost` and loopback addresses. Reached on a loopback address, it answers only to those (421 otherwise: a DNS rebinding guard); given, the rule holds on every address. List the names a reverse proxy on this machine forwards.',
    ),
    maxTokenFailures: documented(
      z.number().int().min(1).max(1_000).default(DEFAULT_MAX_TOKEN_FAILURES),
      'number',
      `\`${DEFAULT_MAX_TOKEN_FAILURES}\``,
      'Wrong tokens one client address may send before it is locked out (429, the right token refused too).',
    ),
    tokenLockoutMs: documented(
      positiveMs().default(DEFAULT_TOKEN_LOCKOUT_MS),
      'number',
      '`60_000` (1 min)',
      'First lock-out of such an address; each lock-out in a row doubles it (up to 64 times).',
    ),
    now: documented(
      z.custom<() => number>((v) => typeof v === 'function', 'must be a function').optional(),
      '() => number',
      '`Date.now`',
      'The clock (epoch milliseconds).',
    ),
    refreshMs: documented(
      z
        .number()
        .int()
        .refine((v) => v === 0 || (v >= 250 && v <= 3_600_000), 'must be 0 (off) or from 250 to 3_600_000')
        .default(DEFAULT_REFRESH_MS),
      'number',
      '`5_000` (5 s)',
      'How often the page redraws itself; 0 turns live refresh off. The operator can pause it.',
    ),
    workerSeenWithinMs: documented(
      positiveMs().default(DEFAULT_WORKER_SEEN_WITHIN_MS),
      'number',
      '`120_000` (2 min)',
      'Open jobs and no worker whose heart-beat is this recent: the overview warns that nothing delivers them.',
    ),
    atRiskWithinMs: documented(
      positiveMs().default(DEFAULT_AT_RISK_WITHIN_MS),
      'number',
      '`86_400_000` (24 h)',
      'Open jobs whose deadline is this close count as at risk and are highlighted.',
    ),
    deadlineBucketsMs: documented(
      z
        .array(z.number().int().positive())
        .min(1)
        .refine((a) => a.every((v, i) => i === 0 || v > (a[i - 1] ?? 0)), 'must be ascending')
        .default([...DEFAULT_DEADLINE_BUCKETS_MS]),
      'number[]',
      '1 h, 6 h, 24 h, 3 d, 7 d',
      'Upper bounds of the bars of the chart of open jobs by time left (ascending).',
    ),
    maxGroupedDead: documented(
      z.number().int().min(1).max(100_000).default(DEFAULT_MAX_GROUPED_DEAD),
      'number',
      '`1_000`',
      'How many dead jobs the reason groups are built from.',
    ),
    onRequestError: documented(
      z
        .custom<(error: DashboardRequestError) => void>((v) => typeof v === 'function', 'must be a function')
        .default(() => logRequestError),
      '(error: DashboardRequestError) => void',
      'logs to the console',
      "Told of each refused request (`kind: 'client'`, a 4xx: one `console.warn` line, no stack) and each store failure (`kind: 'store'`, a 500: `console.error` with the error).",
    ),
  })
  .refine((o) => !o.tokenForReads || o.token !== undefined, {
    path: ['tokenForReads'],
    message: 'needs a token (the reads would be locked for everyone)',
  });

/** Options of `createDashboard`. */
export type DashboardOptions = z.input<typeof dashboardOptionsSchema>;
/** The options with every default filled in. */
export type ResolvedDashboardOptions = z.output<typeof dashboardOptionsSchema>;

/**
 * Validates the options (an `OptionsError` names a bad or unknown one; the token is never echoed).
 *
 * @example
 * ```ts
 * const o = parseDashboardOptions({ outbox, token: process.env.POSTBACK_DASHBOARD_TOKEN });
 * ```
 */
export function parseDashboardOptions(options: DashboardOptions): ResolvedDashboardOptions {
  return parseOptions(dashboardOptionsSchema, options);
}

/**
 * The options table of the README, rendered from the schema's rows in its key order.
 *
 * @example
 * ```ts
 * console.log(renderDashboardOptionsTable());
 * ```
 */
export function renderDashboardOptionsTable(): string {
  return renderOptionsTable(dashboardOptionsSchema.shape);
}

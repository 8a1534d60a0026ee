/**
 * The dashboard's options: one zod schema (unknown keys refused) that is the single source of their
 * types, defaults and validation, and the README table rendered from it.
 */
import { DEFAULT_AT_RISK_WITHIN_MS, type Outbox, parseOptions } from '@postback/core';
import { z } from 'zod';

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
 * Shortest token accepted: a token guards replay and purge, so it must not be guessable.
 * @defaultValue 16
 */
export const MIN_TOKEN_LENGTH = 16;

/**
 * How many dead jobs the reason groups are built from (the newest are read first page by page).
 * @defaultValue 1_000
 */
export const DEFAULT_MAX_GROUPED_DEAD = 1_000;

/** One README row per option, in the schema's key order. */
interface OptionRow {
  type: string;
  default: string;
  description: string;
}

const ROWS: Record<keyof DashboardOptions, OptionRow> = {
  outbox: {
    type: 'Outbox',
    default: 'required',
    description: 'The store to show: SQLite, Postgres, SQS or memory.',
  },
  token: {
    type: 'string',
    default: '—',
    description: `Enables replay and purge for requests carrying \`Authorization: Bearer <token>\` (at least ${MIN_TOKEN_LENGTH} characters). Without it the dashboard is read-only.`,
  },
  now: { type: '() => number', default: '`Date.now`', description: 'The clock (epoch milliseconds).' },
  atRiskWithinMs: {
    type: 'number',
    default: '`86_400_000` (24 h)',
    description: 'Open jobs whose deadline is this close count as at risk and are highlighted.',
  },
  deadlineBucketsMs: {
    type: 'number[]',
    default: '1 h, 6 h, 24 h, 3 d, 7 d',
    description: 'Upper bounds of the bars of the chart of open jobs by time left (ascending).',
  },
  maxGroupedDead: {
    type: 'number',
    default: '`1_000`',
    description: 'How many dead jobs the reason groups are built from.',
  },
};

/**
 * The schema of {@link DashboardOptions}.
 *
 * @example
 * ```ts
 * const resolved = dashboardOptionsSchema.parse({ outbox });
 * ```
 */
export const dashboardOptionsSchema = z.strictObject({
  outbox: z.custom<Outbox>(
    (v) =>
      typeof v === 'object' &&
      v !== null &&
      ['stats', 'listJobs', 'history', 'get', 'replay', 'purgeDead'].every(
        (m) => typeof (v as Record<string, unknown>)[m] === 'function',
      ),
    'must implement the Outbox interface',
  ),
  token: z.string().min(MIN_TOKEN_LENGTH, `must be at least ${MIN_TOKEN_LENGTH} characters`).optional(),
  now: z.custom<() => number>((v) => typeof v === 'function', 'must be a function').optional(),
  atRiskWithinMs: z.number().int().positive().default(DEFAULT_AT_RISK_WITHIN_MS),
  deadlineBucketsMs: z
    .array(z.number().int().positive())
    .min(1)
    .refine((a) => a.every((v, i) => i === 0 || v > (a[i - 1] ?? 0)), 'must be ascending')
    .default([...DEFAULT_DEADLINE_BUCKETS_MS]),
  maxGroupedDead: z.number().int().min(1).max(100_000).default(DEFAULT_MAX_GROUPED_DEAD),
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
 * The options table of the README, rendered from {@link ROWS} in the schema's key order.
 *
 * @example
 * ```ts
 * console.log(renderDashboardOptionsTable());
 * ```
 */
export function renderDashboardOptionsTable(): string {
  const lines = Object.keys(dashboardOptionsSchema.shape).map((name) => {
    const row = ROWS[name as keyof DashboardOptions];
    return `| \`${name}\` | \`${row.type}\` | ${row.default} | ${row.description} |`;
  });
  return ['| option | type | default | what it does |', '|---|---|---|---|', ...lines].join('\n');
}

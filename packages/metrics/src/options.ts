/**
 * The options of `createPrometheusMetrics`: one zod schema, the single source of truth for their types,
 * defaults and validation (unknown keys refused, bad values named by an `OptionsError`), and for the
 * README table, which a test keeps equal to {@link renderMetricsOptionsTable}'s rendering.
 */
import { DEFAULT_AT_RISK_WITHIN_MS } from '@postback/core';
import { documented, renderOptionsTable } from '@postback/core/store';
import { Registry } from 'prom-client';
import { z } from 'zod';
import type { DispatcherLike, StatsSource } from './source.ts';
import { metricsPackageVersion } from './version.ts';

/** Prefix of every metric name. @defaultValue `'postback_'` */
export const DEFAULT_PREFIX = 'postback_';

/**
 * Upper bounds of the open-jobs-by-deadline buckets (milliseconds from now): 1 h, 6 h, 24 h, 3 days, 7 days.
 * @defaultValue [3_600_000, 21_600_000, 86_400_000, 259_200_000, 604_800_000]
 */
export const DEFAULT_DEADLINE_BUCKETS_MS: readonly number[] = [
  3_600_000, 21_600_000, 86_400_000, 259_200_000, 604_800_000,
];

/**
 * Buckets of the send-latency histogram (seconds): one request each (a retry is the job's next attempt),
 * the upper buckets reaching a slow service's timeout.
 * @defaultValue [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
 */
export const DEFAULT_SEND_DURATION_BUCKETS_S: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

/**
 * With `accountLabel`, how many distinct accounts get their own `account` label value; later ones are
 * counted as `other`. @defaultValue 100
 */
export const DEFAULT_ACCOUNT_LABEL_LIMIT = 100;

/** How long a scrape or a readiness check waits for `outbox.stats`. @defaultValue 5000 */
export const DEFAULT_STATS_TIMEOUT_MS = 5_000;

const ascendingPositive = z
  .array(z.number().positive())
  .refine((xs) => xs.every((x, i) => i === 0 || x > (xs[i - 1] as number)), 'must be ascending');

/** The schema of `createPrometheusMetrics`'s options. */
export const prometheusMetricsOptionsSchema = z.strictObject({
  dispatcher: documented(
    z.custom<DispatcherLike>((v) => typeof (v as DispatcherLike | null)?.on === 'function', 'must have on()'),
    'Dispatcher',
    'required',
    'Its events feed the counters and the latency histogram; its state the pause gauges.',
  ),
  outbox: documented(
    z.custom<StatsSource>((v) => typeof (v as StatsSource | null)?.stats === 'function', 'must have stats()'),
    'Outbox',
    'required',
    'Read with `stats` at each scrape: jobs by state, at risk, by deadline.',
  ),
  registry: documented(
    z.instanceof(Registry).optional(),
    'Registry',
    'a new `Registry`',
    "prom-client registry to register in (prom-client's global `register` serves them beside the app's own metrics).",
  ),
  prefix: documented(
    z
      .string()
      .regex(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/, 'must be a metric name prefix')
      .default(DEFAULT_PREFIX),
    'string',
    "`'postback_'`",
    'Prefix of every metric name.',
  ),
  deadlineBucketsMs: documented(
    ascendingPositive.default([...DEFAULT_DEADLINE_BUCKETS_MS]),
    'number[]',
    '1 h, 6 h, 24 h, 3 d, 7 d',
    'Bounds (ms from now, ascending) of `open_jobs_by_deadline`.',
  ),
  atRiskWithinMs: documented(
    z.number().positive().default(DEFAULT_AT_RISK_WITHIN_MS),
    'number',
    '`86400000` (24 h)',
    'Open jobs whose deadline is this close count in `jobs_at_risk`.',
  ),
  sendDurationBuckets: documented(
    ascendingPositive.default([...DEFAULT_SEND_DURATION_BUCKETS_S]),
    'number[]',
    '5 ms … 60 s',
    'Buckets (seconds) of `send_duration_seconds`.',
  ),
  statsTimeoutMs: documented(
    z.number().positive().default(DEFAULT_STATS_TIMEOUT_MS),
    'number',
    '`5000`',
    'How long a scrape or `/readyz` waits for `outbox.stats` before reporting the outbox down.',
  ),
  accountLabel: documented(
    z.boolean().default(false),
    'boolean',
    '`false`',
    'Adds an `account` label to the delivered/retried/dead/expired counters (not to the latency histogram). Off by default: counter series are never dropped, so each account ever seen stays a series.',
  ),
  accountLabelLimit: documented(
    z.number().int().positive().max(10_000).default(DEFAULT_ACCOUNT_LABEL_LIMIT),
    'number',
    '`100`',
    'With `accountLabel`: distinct accounts that get their own label value; later ones are counted as `account="other"`.',
  ),
  version: documented(
    z
      .string()
      .min(1)
      .max(100)
      .default(() => metricsPackageVersion()),
    'string',
    "this package's version",
    "The `version` label of `build_info` (`postback worker` gives the CLI's).",
  ),
  defaultMetrics: documented(
    z.boolean().default(false),
    'boolean',
    '`false`',
    "Also registers prom-client's default metrics (`process_*`, `nodejs_*`; not its three `_total` gauges, which promtool refuses) in the registry (`postback worker` turns it on). Off by default: an app may collect them already. Turn it on for one registry per process (prom-client's GC observer outlives `close()`).",
  ),
  now: documented(
    z
      .custom<() => number>((v) => typeof v === 'function', 'must be a function')
      .default(() => () => Date.now()),
    '() => number',
    '`Date.now`',
    'The clock (tests inject one).',
  ),
});

/** Options of `createPrometheusMetrics` as given. */
export type PrometheusMetricsOptions = z.input<typeof prometheusMetricsOptionsSchema>;

/**
 * The Markdown table of {@link prometheusMetricsOptionsSchema}, as the README shows it.
 *
 * @example
 * ```ts
 * console.log(renderMetricsOptionsTable());
 * ```
 */
export function renderMetricsOptionsTable(): string {
  return renderOptionsTable(prometheusMetricsOptionsSchema.shape);
}

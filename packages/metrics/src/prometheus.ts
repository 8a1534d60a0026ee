/**
 * The Dispatcher's figures as Prometheus metrics (prom-client). Queue figures are read from `outbox.stats`
 * at scrape time (one call per scrape, shared by every gauge), so every worker and every backend reports
 * the same truth; delivery figures (counters, send latency) come from this process's Dispatcher events.
 * No label takes an unbounded value: never an order id, a job id or a reason.
 */
import { type HeldProblem, JOB_STATES, OptionsError } from '@postback/core';
import { parseOptions } from '@postback/core/store';
import {
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  Registry,
  type RegistryContentType,
} from 'prom-client';
import { type PrometheusMetricsOptions, prometheusMetricsOptionsSchema } from './options.ts';
import {
  accountLabel,
  boundedAccountLabels,
  createStatsReader,
  followAccountPauses,
  followPause,
  kindLabel,
  outcomeLabel,
  type PausedAccount,
  type StatsReading,
} from './source.ts';

/** Whether this worker should receive traffic, and why not. */
export type Readiness =
  | { ready: true }
  | { ready: false; reason: 'paused'; pausedUntil: string | null }
  | { ready: false; reason: 'outbox-unreachable'; error: string }
  | { ready: false; reason: 'not-ready'; detail: string };

/** What `createPrometheusMetrics` returns. */
export interface PrometheusMetrics {
  /** The registry the metrics are in. */
  readonly registry: Registry<RegistryContentType>;
  /** The Prometheus text exposition (reads `outbox.stats` once). */
  scrape(): Promise<string>;
  /** Content type of {@link scrape}'s text. */
  readonly contentType: string;
  /**
   * Ready when delivery is not paused and `outbox.stats` answers now (within `statsTimeoutMs`). Accounts
   * paused one by one (with `apiKeyFor`) do not make it unready: the other accounts deliver.
   */
  readiness(): Promise<Readiness>;
  /** The accounts paused now (from `account-paused`/`account-resumed`), oldest first; empty when none. */
  pausedAccounts(): PausedAccount[];
  /** Stops listening to the Dispatcher and removes the metrics from the registry. */
  close(): void;
}

const seconds = (ms: number) => ms / 1000;

/**
 * prom-client's default gauges named like counters: promtool refuses a `_total` gauge, and each is the sum
 * of its per-type gauge (`sum(nodejs_active_handles)`), so they are left out (prometheus/client_js#283).
 */
const DEFAULT_METRICS_LEFT_OUT = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/**
 * Registers the Dispatcher's metrics in a prom-client registry. Metric names (with the default prefix),
 * all passing `promtool check metrics`:
 *
 * - `postback_build_info{version}` — always 1;
 * - `postback_jobs{state}` — jobs by state; `postback_jobs_at_risk` — open jobs whose deadline is within
 *   `atRiskWithinMs`; `postback_oldest_pending_age_seconds`;
 * - `postback_open_jobs_by_deadline{within_seconds}` — open jobs whose deadline is within that many
 *   seconds, cumulative (`within_seconds="+Inf"` is every open job, refunds without a deadline included);
 * - `postback_delivery_paused` (1/0), `postback_delivery_paused_until_timestamp_seconds` (Unix time, 0
 *   when not paused), `postback_outbox_up` (1 when the last `stats` call answered);
 * - `postback_account_paused{account}` (1 per account paused now; the series goes when it resumes),
 *   `postback_paused_accounts` (how many), `postback_account_pauses_total`;
 * - `postback_held_jobs{account,campaign}` — jobs held because their campaign is not on s2s, one series
 *   per problem (gone once released), and `postback_held_order_value{account,campaign}` (their order value);
 * - `postback_jobs_delivered_total{kind}` (`{kind,account}` with `accountLabel`), `_retried_total`,
 *   `_dead_total`, `_expired_total`,
 *   `postback_delivery_pauses_total`, `postback_dispatcher_errors_total{during}`;
 * - `postback_send_duration_seconds{kind,outcome}` — a histogram of requests (each one attempt);
 * - with `defaultMetrics`, prom-client's `process_*` and `nodejs_*` metrics of this process.
 *
 * @throws {OptionsError} naming a bad or unknown option.
 * @example
 * ```ts
 * const metrics = createPrometheusMetrics({ dispatcher, outbox });
 * http.createServer(metricsHandler(metrics)).listen(9464, '127.0.0.1');
 * ```
 */
export function createPrometheusMetrics(options: PrometheusMetricsOptions): PrometheusMetrics {
  const o = parseOptions(prometheusMetricsOptionsSchema, options);
  const registry = o.registry ?? new Registry();
  if (o.defaultMetrics && registry.getSingleMetric('process_cpu_user_seconds_total') !== undefined) {
    throw new OptionsError(
      'defaultMetrics',
      "the registry already holds prom-client's default metrics: leave defaultMetrics off",
    );
  }
  const p = o.prefix;
  const readStats = createStatsReader(o.outbox, {
    now: o.now,
    timeoutMs: o.statsTimeoutMs,
    atRiskWithinMs: o.atRiskWithinMs,
    deadlineBucketsMs: o.deadlineBucketsMs,
  });
  const pause = followPause(o.dispatcher);
  const registers = [registry];
  const names: string[] = [];
  const track = <M>(name: string, make: (name: string) => M): M => {
    names.push(name);
    return make(name);
  };

  const buildInfo: Gauge<'version'> = track(
    `${p}build_info`,
    (name) => new Gauge({ name, help: "postback's version (always 1).", labelNames: ['version'], registers }),
  );
  buildInfo.set({ version: o.version }, 1);
  if (o.defaultMetrics) {
    const before = new Set(registry.getMetricsAsArray().map((m) => m.name));
    collectDefaultMetrics({ register: registry });
    for (const name of DEFAULT_METRICS_LEFT_OUT) registry.removeSingleMetric(name);
    for (const m of registry.getMetricsAsArray()) if (!before.has(m.name)) names.push(m.name);
  }

  // One `stats` call per scrape: the first gauge collected starts it, the others share it.
  let scrapeReading: Promise<StatsReading> | null = null;
  const reading = () => {
    scrapeReading ??= readStats();
    return scrapeReading;
  };
  const withStats =
    (gauge: Gauge, fill: (stats: Extract<StatsReading, { ok: true }>) => void) => async () => {
      const r = await reading();
      gauge.reset();
      if (r.ok) fill(r);
    };

  const jobs: Gauge<'state'> = track(
    `${p}jobs`,
    (name) =>
      new Gauge({
        name,
        help: 'Jobs in the outbox by state (outbox.stats at scrape time).',
        labelNames: ['state'],
        registers,
        collect: () =>
          withStats(jobs, ({ stats }) => {
            for (const state of JOB_STATES) jobs.set({ state }, stats.counts[state]);
          })(),
      }),
  );
  const atRisk: Gauge = track(
    `${p}jobs_at_risk`,
    (name) =>
      new Gauge({
        name,
        help: `Open jobs whose deadline is within ${o.atRiskWithinMs / 1000} s.`,
        registers,
        collect: () => withStats(atRisk, ({ stats }) => atRisk.set(stats.atRisk.count))(),
      }),
  );
  const oldest: Gauge = track(
    `${p}oldest_pending_age_seconds`,
    (name) =>
      new Gauge({
        name,
        help: 'Age of the oldest pending job (0 when none).',
        registers,
        collect: () =>
          withStats(oldest, ({ stats, at }) =>
            oldest.set(stats.oldestPendingAt === null ? 0 : seconds(at - stats.oldestPendingAt)),
          )(),
      }),
  );
  const byDeadline: Gauge<'within_seconds'> = track(
    `${p}open_jobs_by_deadline`,
    (name) =>
      new Gauge({
        name,
        help: 'Open jobs whose deadline is within within_seconds, cumulative (+Inf: every open job).',
        labelNames: ['within_seconds'],
        registers,
        collect: () =>
          withStats(byDeadline, ({ stats }) => {
            for (const bucket of stats.deadlineBuckets)
              byDeadline.set({ within_seconds: String(seconds(bucket.withinMs)) }, bucket.count);
            byDeadline.set({ within_seconds: '+Inf' }, stats.counts.pending + stats.counts.inflight);
          })(),
      }),
  );
  const heldLabel = (h: HeldProblem) => ({ account: accountLabel(h.account), campaign: h.campaignId ?? '' });
  const held: Gauge<'account' | 'campaign'> = track(
    `${p}held_jobs`,
    (name) =>
      new Gauge({
        name,
        help: 'Open jobs held because their campaign is not on s2s, per account and campaign (campaign="": not named by the service); absent once released.',
        labelNames: ['account', 'campaign'],
        registers,
        collect: () =>
          withStats(held, ({ stats }) => {
            for (const h of stats.held ?? []) held.set(heldLabel(h), h.count);
          })(),
      }),
  );
  const heldValue: Gauge<'account' | 'campaign'> = track(
    `${p}held_order_value`,
    (name) =>
      new Gauge({
        name,
        help: "Order value of the held jobs (in the service's currency units), per account and campaign.",
        labelNames: ['account', 'campaign'],
        registers,
        collect: () =>
          withStats(heldValue, ({ stats }) => {
            for (const h of stats.held ?? []) heldValue.set(heldLabel(h), h.valueMicros / 1_000_000);
          })(),
      }),
  );
  const up: Gauge = track(
    `${p}outbox_up`,
    (name) =>
      new Gauge({
        name,
        help: `1 when outbox.stats answered this scrape within ${o.statsTimeoutMs} ms, else 0.`,
        registers,
        async collect() {
          up.set((await reading()).ok ? 1 : 0);
          // The last gauge to read the scrape's stats (collection runs in registration order, concurrently).
          scrapeReading = null;
        },
      }),
  );
  const paused: Gauge = track(
    `${p}delivery_paused`,
    (name) =>
      new Gauge({
        name,
        help: 'Whether delivery is paused (1) after a 401/403 from the service, else 0.',
        registers,
        async collect() {
          const state = await pause.read();
          paused.set(state.paused ? 1 : 0);
        },
      }),
  );
  const pausedUntil: Gauge = track(
    `${p}delivery_paused_until_timestamp_seconds`,
    (name) =>
      new Gauge({
        name,
        help: 'While paused: when the next probe of the API key is due (Unix time), else 0.',
        registers,
        async collect() {
          const state = await pause.read();
          pausedUntil.set(state.paused && state.until !== null ? seconds(state.until) : 0);
        },
      }),
  );

  const accountPauses = followAccountPauses(o.dispatcher, o.now);
  const accountPaused: Gauge<'account'> = track(
    `${p}account_paused`,
    (name) =>
      new Gauge({
        name,
        help: '1 for each account paused now (its key was refused or is unknown); absent once it resumes.',
        labelNames: ['account'],
        registers,
        collect() {
          accountPaused.reset();
          for (const a of accountPauses.list()) accountPaused.set({ account: accountLabel(a.account) }, 1);
        },
      }),
  );
  const pausedAccountCount: Gauge = track(
    `${p}paused_accounts`,
    (name) =>
      new Gauge({
        name,
        help: 'How many accounts are paused now (the others deliver).',
        registers,
        collect() {
          pausedAccountCount.set(accountPauses.list().length);
        },
      }),
  );
  const accountPausesTotal = track(
    `${p}account_pauses_total`,
    (name) =>
      new Counter({
        name,
        help: 'Pauses of one account after a 401/403 or a missing key (one per outage of one account).',
        registers,
      }),
  );

  const outcomeLabels = o.accountLabel ? ['kind', 'account'] : ['kind'];
  const labelOf = o.accountLabel ? boundedAccountLabels(o.accountLabelLimit) : null;
  const jobLabels = (job: { kind: string; account?: string | null }): Record<string, string> =>
    labelOf === null
      ? { kind: kindLabel(job.kind) }
      : { kind: kindLabel(job.kind), account: labelOf(job.account ?? null) };
  const counter = (suffix: string, help: string) =>
    track(`${p}${suffix}`, (name) => new Counter({ name, help, labelNames: outcomeLabels, registers }));
  const delivered = counter('jobs_delivered_total', 'Jobs the service accepted.');
  const retried = counter('jobs_retried_total', 'Transient failures: the job goes back to pending.');
  const dead = counter('jobs_dead_total', 'Permanent failures: the job is dead (replayable).');
  const expired = counter('jobs_expired_total', 'Jobs whose deadline passed before they could be sent.');
  const pauses = track(
    `${p}delivery_pauses_total`,
    (name) => new Counter({ name, help: 'Pauses of delivery after a 401/403 (one per outage).', registers }),
  );
  const errors = track(
    `${p}dispatcher_errors_total`,
    (name) =>
      new Counter({
        name,
        help: 'Problems of the Dispatcher itself (outbox unreachable, a listener threw), by step.',
        labelNames: ['during'],
        registers,
      }),
  );
  const sendDuration = track(
    `${p}send_duration_seconds`,
    (name) =>
      new Histogram({
        name,
        help: 'Duration of one request of a job (one attempt), by outcome.',
        labelNames: ['kind', 'outcome'],
        buckets: o.sendDurationBuckets,
        registers,
      }),
  );
  // With account labels the series appear with their accounts; without, both kinds start at 0.
  if (labelOf === null) {
    for (const kind of ['confirm', 'refund']) {
      for (const c of [delivered, retried, dead, expired]) c.inc({ kind }, 0);
    }
  }

  const d = o.dispatcher;
  const offs = [
    d.on('delivered', ({ job }) => delivered.inc(jobLabels(job))),
    d.on('retried', ({ job }) => retried.inc(jobLabels(job))),
    d.on('dead', ({ job }) => dead.inc(jobLabels(job))),
    d.on('expired', ({ job }) => expired.inc(jobLabels(job))),
    d.on('paused', () => pauses.inc()),
    d.on('account-paused', () => accountPausesTotal.inc()),
    d.on('error', ({ during }) => errors.inc({ during: String(during).slice(0, 20) })),
    d.on('attempt', ({ job, attempt }) =>
      sendDuration.observe(
        { kind: kindLabel(job.kind), outcome: outcomeLabel(attempt.outcome) },
        seconds(attempt.durationMs),
      ),
    ),
  ];

  return {
    registry,
    get contentType() {
      return registry.contentType;
    },
    scrape: () => registry.metrics(),
    pausedAccounts: () => accountPauses.list(),
    async readiness() {
      const state = await pause.read();
      if (state.paused) {
        return {
          ready: false,
          reason: 'paused',
          pausedUntil: state.until === null ? null : new Date(state.until).toISOString(),
        };
      }
      const r = await readStats();
      return r.ok ? { ready: true } : { ready: false, reason: 'outbox-unreachable', error: r.error };
    },
    close() {
      for (const off of offs) if (typeof off === 'function') off();
      pause.close();
      accountPauses.close();
      for (const name of names) registry.removeSingleMetric(name);
    },
  };
}

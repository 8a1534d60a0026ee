/**
 * The Prometheus figures as OpenTelemetry instruments: counters and a send-duration histogram fed by the
 * Dispatcher's events, and observable gauges read from `outbox.stats` once per collection (a batch
 * callback). Attributes are bounded (kind, outcome, state, bucket bound); never an order id.
 */
import type { Meter } from '@opentelemetry/api';
import { DEFAULT_AT_RISK_WITHIN_MS, JOB_STATES } from '@postback/core';
import {
  DEFAULT_DEADLINE_BUCKETS_MS,
  DEFAULT_SEND_DURATION_BUCKETS_S,
  DEFAULT_STATS_TIMEOUT_MS,
} from '../options.ts';
import {
  accountLabel,
  createStatsReader,
  type DispatcherLike,
  followAccountPauses,
  followPause,
  kindLabel,
  outcomeLabel,
  type StatsSource,
} from '../source.ts';

/** Units as the OpenTelemetry semantic conventions write counts of things: an annotation in braces. */
const JOB = '{job}';
const PAUSE = '{pause}';

/** Options of {@link meterDispatcher}. */
export interface MeterDispatcherOptions {
  /** Where instruments go, e.g. `metrics.getMeter('postback')`. */
  meter: Meter;
  /** Read with `stats` at each collection for the queue gauges; without it, only event figures are recorded. */
  outbox?: StatsSource;
  /** @defaultValue core's `DEFAULT_AT_RISK_WITHIN_MS` (24 h) */
  atRiskWithinMs?: number;
  /** @defaultValue {@link DEFAULT_DEADLINE_BUCKETS_MS} */
  deadlineBucketsMs?: readonly number[];
  /** @defaultValue {@link DEFAULT_STATS_TIMEOUT_MS} */
  statsTimeoutMs?: number;
  /** @defaultValue `Date.now` */
  now?: () => number;
}

/**
 * Records the Dispatcher's figures with `meter`: counters `postback.jobs.delivered` (and `.retried`,
 * `.dead`, `.expired`; unit `{job}`, attribute `postback.job.kind`), `postback.delivery.pauses` and
 * `postback.account.pauses` (`{pause}`); the histogram `postback.send.duration` (`s`, with bucket advice
 * in seconds: {@link DEFAULT_SEND_DURATION_BUCKETS_S}; attributes kind and `postback.outcome`); and
 * observable gauges `postback.jobs` (`{job}`, `postback.job.state`), `postback.jobs.at_risk`,
 * `postback.jobs.open.deadline_within` (`postback.within_s`: cumulative, like the Prometheus
 * `open_jobs_by_deadline`), `postback.delivery.paused`, `postback.account.paused` (`postback.account`: 1
 * per account paused now), `postback.outbox.up` (those three in `1`).
 *
 * @example
 * ```ts
 * import { metrics } from '@opentelemetry/api';
 * const meters = meterDispatcher(dispatcher, { meter: metrics.getMeter('postback'), outbox });
 * // ... at shutdown
 * meters.close();
 * ```
 */
export function meterDispatcher(
  dispatcher: DispatcherLike,
  options: MeterDispatcherOptions,
): { close(): void } {
  const { meter } = options;
  const kindAttr = (kind: string) => ({ 'postback.job.kind': kindLabel(kind) });
  const delivered = meter.createCounter('postback.jobs.delivered', {
    description: 'Jobs the service accepted.',
    unit: JOB,
  });
  const retried = meter.createCounter('postback.jobs.retried', {
    description: 'Transient failures (back to pending).',
    unit: JOB,
  });
  const dead = meter.createCounter('postback.jobs.dead', {
    description: 'Permanent failures (dead, replayable).',
    unit: JOB,
  });
  const expired = meter.createCounter('postback.jobs.expired', {
    description: 'Jobs whose deadline passed unsent.',
    unit: JOB,
  });
  const pauses = meter.createCounter('postback.delivery.pauses', {
    description: 'Pauses after a 401/403.',
    unit: PAUSE,
  });
  const accountPausesCounter = meter.createCounter('postback.account.pauses', {
    description: 'Pauses of one account after a 401/403 or a missing key (one per outage).',
    unit: PAUSE,
  });
  // Bucket advice in seconds: without it the SDK's defaults (0 … 10,000, made for milliseconds) put every
  // send under 5 s in one bucket. A View given to the SDK still overrides it.
  const duration = meter.createHistogram('postback.send.duration', {
    description: 'Duration of one request to the service (every request is one attempt).',
    unit: 's',
    advice: { explicitBucketBoundaries: [...DEFAULT_SEND_DURATION_BUCKETS_S] },
  });
  const offs = [
    dispatcher.on('delivered', ({ job }) => delivered.add(1, kindAttr(job.kind))),
    dispatcher.on('retried', ({ job }) => retried.add(1, kindAttr(job.kind))),
    dispatcher.on('dead', ({ job }) => dead.add(1, kindAttr(job.kind))),
    dispatcher.on('expired', ({ job }) => expired.add(1, kindAttr(job.kind))),
    dispatcher.on('paused', () => pauses.add(1)),
    dispatcher.on('account-paused', () => accountPausesCounter.add(1)),
    dispatcher.on('attempt', ({ job, attempt }) =>
      duration.record(attempt.durationMs / 1000, {
        ...kindAttr(job.kind),
        'postback.outcome': outcomeLabel(attempt.outcome),
      }),
    ),
  ];
  const pause = followPause(dispatcher);
  const paused = meter.createObservableGauge('postback.delivery.paused', {
    description: 'Whether delivery is paused (1) after a 401/403, else 0.',
    unit: '1',
  });
  const pausedCallback = async (result: { observe(value: number): void }) => {
    result.observe((await pause.read()).paused ? 1 : 0);
  };
  paused.addCallback(pausedCallback);
  const accountPauses = followAccountPauses(dispatcher, options.now ?? Date.now);
  const accountPaused = meter.createObservableGauge('postback.account.paused', {
    description: '1 for each account paused now (attribute postback.account); not observed once resumed.',
    unit: '1',
  });
  const accountPausedCallback = (result: {
    observe(value: number, attributes?: Record<string, string>): void;
  }) => {
    for (const a of accountPauses.list()) result.observe(1, { 'postback.account': accountLabel(a.account) });
  };
  accountPaused.addCallback(accountPausedCallback);

  let removeBatch: (() => void) | undefined;
  if (options.outbox !== undefined) {
    const readStats = createStatsReader(options.outbox, {
      now: options.now ?? Date.now,
      timeoutMs: options.statsTimeoutMs ?? DEFAULT_STATS_TIMEOUT_MS,
      atRiskWithinMs: options.atRiskWithinMs ?? DEFAULT_AT_RISK_WITHIN_MS,
      deadlineBucketsMs: options.deadlineBucketsMs ?? DEFAULT_DEADLINE_BUCKETS_MS,
    });
    const jobs = meter.createObservableGauge('postback.jobs', {
      description: 'Jobs in the outbox by state.',
      unit: JOB,
    });
    const atRisk = meter.createObservableGauge('postback.jobs.at_risk', {
      description: 'Open jobs whose deadline is near.',
      unit: JOB,
    });
    const byDeadline = meter.createObservableGauge('postback.jobs.open.deadline_within', {
      description: 'Open jobs whose deadline is within postback.within_s seconds (cumulative).',
      unit: JOB,
    });
    const up = meter.createObservableGauge('postback.outbox.up', {
      description: '1 when outbox.stats answered, else 0.',
      unit: '1',
    });
    const observables = [jobs, atRisk, byDeadline, up];
    const batch = async (result: import('@opentelemetry/api').BatchObservableResult) => {
      const r = await readStats();
      result.observe(up, r.ok ? 1 : 0);
      if (!r.ok) return;
      for (const state of JOB_STATES)
        result.observe(jobs, r.stats.counts[state], { 'postback.job.state': state });
      result.observe(atRisk, r.stats.atRisk.count);
      for (const bucket of r.stats.deadlineBuckets)
        result.observe(byDeadline, bucket.count, { 'postback.within_s': bucket.withinMs / 1000 });
    };
    meter.addBatchObservableCallback(batch, observables);
    removeBatch = () => meter.removeBatchObservableCallback(batch, observables);
  }

  return {
    close() {
      for (const off of offs) if (typeof off === 'function') off();
      pause.close();
      paused.removeCallback(pausedCallback);
      accountPauses.close();
      accountPaused.removeCallback(accountPausedCallback);
      removeBatch?.();
    },
  };
}

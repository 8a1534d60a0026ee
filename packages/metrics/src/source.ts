/**
 * What this package reads from a Dispatcher and an outbox, as structural types: a real `Dispatcher` fits,
 * and so does a wrapper that only forwards events (the CLI's worker handle). Also the one reader of
 * `outbox.stats` that a scrape, a readiness check and an OpenTelemetry callback share: one call in flight
 * at a time, bounded by a timeout, so a stuck backend never hangs a scrape.
 */
import type {
  DispatcherEventName,
  DispatcherEvents,
  EpochMs,
  Outbox,
  OutboxStats,
  StatsOptions,
} from '@postback/core';

/** What is read of a Dispatcher: its events, and (when it has them) its state and pause. */
export interface DispatcherLike {
  on<K extends DispatcherEventName>(name: K, listener: (payload: DispatcherEvents[K]) => void): unknown;
  /** `paused` or `probing` counts as paused. Without it, the pause is followed from `paused`/`resumed` events. */
  readonly state?: string;
  /** Read only while paused, for the end of a pause that a failed probe extended. */
  metrics?(): Promise<{ pausedUntil: EpochMs | null }>;
}

/** What is read of an outbox. */
export type StatsSource = Pick<Outbox, 'stats'>;

/** The last answer of `outbox.stats`, or why there was none. */
export type StatsReading =
  | { ok: true; stats: OutboxStats; at: EpochMs }
  | { ok: false; error: string; at: EpochMs };

/** Reads `outbox.stats`, sharing the call in flight, failing after `timeoutMs`. */
export function createStatsReader(
  outbox: StatsSource,
  options: StatsOptions & { now: () => EpochMs; timeoutMs: number },
): () => Promise<StatsReading> {
  let inflight: Promise<StatsReading> | null = null;
  const statsOptions: StatsOptions = {
    atRiskWithinMs: options.atRiskWithinMs,
    deadlineBucketsMs: options.deadlineBucketsMs,
  };
  const readOnce = async (): Promise<StatsReading> => {
    const at = options.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`outbox.stats did not answer within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
    });
    try {
      const stats = await Promise.race([outbox.stats(at, statsOptions), late]);
      return { ok: true, stats, at };
    } catch (error) {
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return { ok: false, error: message.slice(0, 300), at };
    } finally {
      clearTimeout(timer);
    }
  };
  return () => {
    inflight ??= readOnce().finally(() => {
      inflight = null;
    });
    return inflight;
  };
}

/** Follows whether delivery is paused, and until when. */
export function followPause(dispatcher: DispatcherLike): {
  read(): Promise<{ paused: boolean; until: EpochMs | null }>;
  close(): void;
} {
  let pausedByEvents = false;
  let until: EpochMs | null = null;
  const offs = [
    dispatcher.on('paused', (event) => {
      pausedByEvents = true;
      until = event.until;
    }),
    dispatcher.on('resumed', () => {
      pausedByEvents = false;
      until = null;
    }),
  ];
  return {
    async read() {
      const state = dispatcher.state;
      const paused = state === undefined ? pausedByEvents : state === 'paused' || state === 'probing';
      if (!paused) return { paused, until: null };
      if (dispatcher.metrics !== undefined) {
        try {
          until = (await dispatcher.metrics()).pausedUntil ?? until;
        } catch {
          // Keep the end the `paused` event gave.
        }
      }
      return { paused, until };
    },
    close() {
      for (const off of offs) if (typeof off === 'function') off();
    },
  };
}

/** One paused account as this process saw it announced (`account-paused`), until `account-resumed`. */
export interface PausedAccount {
  /** The account (null: jobs without one). */
  account: string | null;
  /** HTTP status that paused it, or null (no key known). */
  status: number | null;
  /** Why (already redacted by the Dispatcher). */
  reason: string;
  /** When this process saw the pause begin. */
  since: EpochMs;
}

/**
 * Follows the accounts paused by a Dispatcher given `apiKeyFor`, from its `account-paused` and
 * `account-resumed` events (one of each per outage), oldest first. Only accounts paused now are kept, so
 * the set is bounded by the paused accounts.
 */
export function followAccountPauses(
  dispatcher: DispatcherLike,
  now: () => EpochMs,
  onChange: (event: 'paused' | 'resumed', account: string | null) => void = () => {},
): { list(): PausedAccount[]; close(): void } {
  const paused = new Map<string, PausedAccount>();
  const key = (account: string | null) => (account === null ? '' : `=${account}`);
  const offs = [
    dispatcher.on('account-paused', (event) => {
      const k = key(event.account);
      const known = paused.get(k);
      paused.set(k, {
        account: event.account,
        status: event.status,
        reason: event.reason,
        since: known?.since ?? now(),
      });
      onChange('paused', event.account);
    }),
    dispatcher.on('account-resumed', (event) => {
      paused.delete(key(event.account));
      onChange('resumed', event.account);
    }),
  ];
  return {
    list: () => [...paused.values()].sort((a, b) => a.since - b.since),
    close() {
      for (const off of offs) if (typeof off === 'function') off();
    },
  };
}

/**
 * The `account` label value of an account: the account itself, `""` for jobs without one (Prometheus
 * reads an empty label as no label).
 */
export const accountLabel = (account: string | null): string => account ?? '';

/**
 * Gives each account a label value, keeping the label's cardinality bounded: the first `limit` distinct
 * accounts seen keep their own value, every later one is `other`. Counter series are never dropped, so a
 * bound on accounts seen is the only bound there is.
 */
export function boundedAccountLabels(limit: number): (account: string | null) => string {
  const seen = new Set<string>();
  return (account) => {
    const label = accountLabel(account);
    if (seen.has(label)) return label;
    if (seen.size >= limit) return 'other';
    seen.add(label);
    return label;
  };
}

/** Outcomes as labels: the known ones, anything else as `other` (a label never takes an unbounded value). */
const OUTCOMES = new Set([
  'delivered',
  'auth',
  'misconfigured',
  'window-closed',
  'rate-limited',
  'unmatched',
  'transient',
  'permanent',
  'stopped',
]);

/** `outcome`, or `other` for one this version does not know. */
export const outcomeLabel = (outcome: string): string => (OUTCOMES.has(outcome) ? outcome : 'other');

/** `kind`, or `other`. */
export const kindLabel = (kind: string): string => (kind === 'confirm' || kind === 'refund' ? kind : 'other');

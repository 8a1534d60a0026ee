/**
 * The Dispatcher's metrics: a snapshot of the queue (from `outbox.stats`) and of this process's delivery,
 * for dashboards and `postback status`.
 */
import type { EpochMs } from '../../policy.ts';
import {
  type AccountPause,
  DEFAULT_AT_RISK_WITHIN_MS,
  type Outbox,
  type OutboxStats,
  type PauseCause,
  type StateCounts,
} from '../outbox-types.ts';
import type { DispatcherState } from './pauses.ts';
import type { OutcomeCounters } from './record.ts';

/** A snapshot for dashboards and `postback status`. */
export interface DispatcherMetrics {
  /** Jobs by state, from `outbox.stats`. */
  depth: StateCounts;
  /** Age of the oldest pending job, or null. */
  oldestPendingAgeMs: number | null;
  /** The pending/inflight job closest to its deadline, and how long it has left (negative: passed). */
  nearestDeadline: (NonNullable<OutboxStats['nearestDeadline']> & { inMs: number }) | null;
  /** Open jobs whose deadline is within `DEFAULT_AT_RISK_WITHIN_MS` (24 h). */
  atRisk: OutboxStats['atRisk'];
  /** Open jobs held for a campaign problem, one entry per account and campaign (from `outbox.stats`). */
  held: OutboxStats['held'];
  state: DispatcherState;
  /** End of the current pause of all delivery, or null. */
  pausedUntil: EpochMs | null;
  /** Why all delivery is paused (`auth`, `misconfigured`, `rate-limited`, ...), or null. */
  pauseCause: PauseCause | null;
  /** Accounts paused now (with `apiKeyFor`: their key was refused or is unknown), oldest first. */
  pausedAccounts: AccountPause[];
  /** Jobs this process holds the lease of: being sent, claimed ahead and waiting to be sent, or being recorded. */
  inflight: number;
  /** Outcomes recorded by this Dispatcher since it was created. */
  counters: {
    delivered: number;
    retried: number;
    /** Jobs held for their campaign (each probe held again counts). */
    held: number;
    dead: number;
    expired: number;
    failed: number;
    pauses: number;
    /** Account pauses begun (one per outage of one account). */
    accountPauses: number;
  };
}

/** What this process knows of its own delivery, read when the snapshot is taken. */
export interface LiveFigures {
  state: DispatcherState;
  pausedUntil: EpochMs | null;
  pauseCause: PauseCause | null;
  inflight: number;
  outcomes: Readonly<OutcomeCounters>;
  pauses: number;
  pausedAccounts: AccountPause[];
  accountPauses: number;
}

/** Takes a snapshot at `at`: the queue from `outbox.stats`, the rest from `live()` once they are read. */
export async function readMetrics(
  outbox: Pick<Outbox, 'stats'>,
  at: EpochMs,
  live: () => LiveFigures,
): Promise<DispatcherMetrics> {
  const stats = await outbox.stats(at, { atRiskWithinMs: DEFAULT_AT_RISK_WITHIN_MS });
  const { state, pausedUntil, pauseCause, inflight, outcomes, pauses, pausedAccounts, accountPauses } =
    live();
  return {
    depth: stats.counts,
    oldestPendingAgeMs: stats.oldestPendingAt === null ? null : at - stats.oldestPendingAt,
    nearestDeadline:
      stats.nearestDeadline === null
        ? null
        : { ...stats.nearestDeadline, inMs: stats.nearestDeadline.deadline - at },
    atRisk: stats.atRisk,
    held: stats.held ?? [],
    state,
    pausedUntil,
    pauseCause,
    pausedAccounts,
    inflight,
    counters: { ...outcomes, pauses, accountPauses },
  };
}

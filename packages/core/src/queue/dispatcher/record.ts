/**
 * Records the outcome of a send durably, then tells listeners: delivered, retried with deadline-capped
 * backoff (or the service's `Retry-After`), held (a campaign not on s2s), dead, expired, unmatched (a
 * reversal of a conversion the service does not have), or given back (its attempt not counted) when a
 * 401/403 or a 429 pauses its scope, or untried while delivery is paused.
 * What each failure class means is decided in `classify.ts`; what is done with it is decided here.
 */
import type { EpochMs } from '../../policy.ts';
import { backoffDelay } from '../backoff.ts';
import type { AttemptOutcome, AttemptRecord, Job } from '../job-types.ts';
import { truncateReason } from '../jobs.ts';
import type { Outbox } from '../outbox-types.ts';
import { capWait, earliestProbeBy, mustGoNow, type WaitTiming } from '../wait-rule.ts';
import type { Failure } from './classify.ts';
import type { Emit } from './events.ts';
import type { JobOutcome } from './held-jobs.ts';
import { type Holds, heldUntil } from './holds.ts';
import type { ResolvedDispatcherOptions } from './options.ts';
import { ALL_ACCOUNTS, type PauseCause, type PauseScope, type PauseTable } from './pauses.ts';
import { DEFAULT_RATE_LIMIT_PAUSE_MS, MAX_RATE_LIMIT_PAUSE_MS } from './rate.ts';
import type { Refusals } from './refusals.ts';
import type { SendResult } from './send.ts';

/** What recording needs. */
export interface RecordContext {
  outbox: Pick<Outbox, 'complete' | 'retry' | 'fail' | 'release' | 'listJobs'>;
  now: () => EpochMs;
  emit: Emit;
  /** Paused by a 401/403 or a 429 (with per-account keys, the job's account only), ended by any other answer. */
  pauses: Pick<PauseTable, 'pause' | 'answered'>;
  /** Whether keys are per account (`apiKeyFor` given). */
  perAccountKeys: boolean;
  backoff: ResolvedDispatcherOptions['backoff'];
  /** How long a refused key pauses its scope, at most (the wait rule may end the pause sooner). */
  authPauseMs: number;
  /** What a last chance leaves room for (`wait-rule.ts`): the send timeout and the poll interval. */
  timing: WaitTiming;
  random: () => number;
  /** Runs of identical refusals per account (`refusals.ts`): a systematic one pauses the account. */
  refusals: Refusals;
  /** Jobs held for their campaign (not on s2s), and released by a delivery. */
  holds: Pick<Holds, 'supported' | 'hold' | 'delivered' | 'awaitsDecision'>;
}

/** Outcomes recorded since the Dispatcher was created (`failed` = dead + expired). */
export interface OutcomeCounters {
  delivered: number;
  retried: number;
  /** Jobs held for their campaign (each probe that is held again counts). */
  held: number;
  dead: number;
  expired: number;
  failed: number;
  /** Reversals the service had no conversion for (not failures: the service answered). */
  unmatched: number;
}

/** Records outcomes; see {@link createRecorder}. Each method returns `lost` when another worker holds the job. */
export interface Recorder {
  readonly counters: Readonly<OutcomeCounters>;
  /**
   * Records what a send came to, at `at` (when the send ended). `deadline` is the one the job was sent
   * by (its own less any clock skew seen); a retry is never due after it.
   */
  settle(job: Job, result: SendResult, at: EpochMs, deadline?: EpochMs | null): Promise<JobOutcome>;
  /**
   * Gives back, untried and its attempt not counted, a job held back by a pause (claimed before it began,
   * or waiting for its probe), due again now: the pause, not the job, keeps this process from claiming it.
   */
  defer(job: Job, pause: { until: EpochMs; reason: string }): Promise<JobOutcome>;
  /**
   * A claimed held order that awaits a decision (its problem's `onSwitch` is not `'send'`): at its last
   * chance it expires unsent (no decision came in its window), earlier it is held again until then. Null,
   * at once, for any other job (it is sent as usual).
   */
  undecided(job: Job): Promise<JobOutcome> | null;
  /**
   * Gives back, due now, a job whose request was under way at `stop()` (begun at `sentAt`): it may have
   * been applied.
   */
  giveBackRequested(job: Job, sentAt: EpochMs | null): Promise<void>;
  /** Gives back jobs never sent (`stop()`, a claim that came back while stopping). */
  release(jobs: readonly Job[]): Promise<void>;
}

/** Why a held order that awaited a decision past its last chance ends expired, unsent. */
export const HELD_UNDECIDED_REASON =
  "held for its campaign, which was not on s2s: no decision ('postback held send|drop') came before its last chance (the pixel may have billed it); not sent";

/** What the attempt history keeps of a send that ended at `at`; none when nothing was sent. */
function attemptOf(
  result: Pick<SendResult, 'sent'>,
  at: EpochMs,
  outcome: AttemptOutcome,
  detail: string | null,
): AttemptRecord | undefined {
  const { sent } = result;
  if (sent === null) return undefined;
  const durationMs = Math.max(0, at - sent.startedAt);
  return { startedAt: sent.startedAt, durationMs, outcome, status: sent.status, detail };
}

/** Creates a recorder with its counters at zero. */
export function createRecorder(ctx: RecordContext): Recorder {
  const { outbox, emit, pauses } = ctx;
  /** Any answer of the service but 401/403 proves the key and the address work again. */
  const proven = (job: Job) => pauses.answered(job.account);
  const counters: OutcomeCounters = {
    delivered: 0,
    retried: 0,
    held: 0,
    dead: 0,
    expired: 0,
    failed: 0,
    unmatched: 0,
  };

  /** The reason of a job whose last real try (`wait-rule.ts`) failed with `reason`. */
  const lastChanceSpent = (deadline: EpochMs | null, reason: string) =>
    truncateReason(
      `last chance before the deadline ${new Date(deadline ?? 0).toISOString()} taken and failed; last error: ${reason}`,
    );

  /**
   * When a pause of `scope` must let one request go: the last chance of the earliest deadline among the
   * jobs it holds back (this job, and the scope's pending jobs, most urgent first in the outbox).
   */
  const probeTimeOf = async (scope: PauseScope, job: Job, at: EpochMs): Promise<EpochMs | null> => {
    const heldBack: Pick<Job, 'deadline'>[] = [job];
    try {
      const filter = scope === ALL_ACCOUNTS ? {} : { account: scope };
      heldBack.push(...(await outbox.listJobs({ states: ['pending'], limit: 1, ...filter })));
    } catch (error) {
      emit('error', { error, during: 'transition' });
    }
    return earliestProbeBy(heldBack, ctx.timing, at);
  };

  const expire = async (
    job: Job,
    at: EpochMs,
    reason: string,
    maybeApplied: boolean,
    attempt: AttemptRecord | undefined,
  ): Promise<JobOutcome> => {
    const expired = { now: at, state: 'expired' as const, reason, maybeApplied, attempt };
    if (!(await outbox.fail(job, expired))) return 'lost';
    counters.expired += 1;
    counters.failed += 1;
    emit('expired', { job, reason });
    return 'expired';
  };

  /** A store that cannot hold jobs dead-letters a campaign not on s2s, as before holds existed. */
  const failureOf = (result: Extract<SendResult, { kind: 'failed' }>): Failure =>
    result.failure.class === 'held' && !ctx.holds.supported
      ? { ...result.failure, class: 'permanent' }
      : result.failure;

  /**
   * A delivery proves its campaign on s2s: held jobs it fixes are released (a failure is only reported).
   * Null at once when there is nothing to release or ask (nearly every delivery).
   */
  const releaseHeldBy = (job: Job, campaignId: string | null, at: EpochMs): Promise<void> | null => {
    const failed = (error: unknown) => emit('error', { error, during: 'transition' });
    try {
      return ctx.holds.delivered(job, campaignId, at)?.catch(failed) ?? null;
    } catch (error) {
      failed(error);
      return null;
    }
  };

  const settle = async (
    job: Job,
    result: SendResult,
    at: EpochMs,
    deadline: EpochMs | null = job.deadline,
  ): Promise<JobOutcome> => {
    const attempt =
      result.kind === 'delivered'
        ? attemptOf(result, at, 'delivered', null)
        : result.kind === 'expired'
          ? attemptOf(result, at, 'transient', result.lastError)
          : attemptOf(result, at, failureOf(result).class, result.failure.reason);
    // Metrics and traces see every send, whether or not its outcome can still be recorded.
    if (attempt !== undefined) emit('attempt', { job, attempt });
    if (result.kind === 'delivered') {
      if (!(await outbox.complete(job, { now: at, campaignId: result.campaignId, attempt }))) return 'lost';
      counters.delivered += 1;
      proven(job);
      ctx.refusals.ended(job.account);
      emit('delivered', { job, campaignId: result.campaignId, at });
      const releasing = releaseHeldBy(job, job.kind === 'refund' ? job.campaignId : result.campaignId, at);
      if (releasing !== null) await releasing;
      return 'delivered';
    }
    if (result.kind === 'expired') {
      const when = new Date(deadline ?? at).toISOString();
      const last = result.lastError === null ? '' : `; last error: ${result.lastError}`;
      const reason = `deadline ${when} passed before the job could be sent${last}`;
      return expire(
        job,
        at,
        reason,
        result.maybeApplied,
        attemptOf(result, at, 'transient', result.lastError),
      );
    }

    const failure = failureOf(result);
    const { maybeApplied } = failure;
    /**
     * Not the job's fault: its scope pauses, and the job is given back, its attempt not counted. After a
     * refused key it stays due: the pause lives in this process (claims leave its scope out until the
     * probe), not in the job, so the next `--drain` run meets the refused key again instead of finding
     * nothing due and exiting 0, and another worker with a good key is not held back. After a 429 it is due
     * when the wait the service asked for ends (capped by its deadline): that wait is the key's, whoever
     * sends with it.
     */
    const pauseScope = async (scope: PauseScope, cause: PauseCause, forMs: number): Promise<JobOutcome> => {
      // The pause never outlives the last chance of the earliest deadline it holds back: one job probes by then.
      // It lasts its own length (a 429's is at least `backoff.minMs` already), or `backoff.minMs` when the
      // last chance comes sooner, never longer than asked (`authPauseMs` may be shorter).
      const probeAt = await probeTimeOf(scope, job, at);
      const endBy = probeAt === null ? null : Math.max(probeAt, at + Math.min(forMs, ctx.backoff.minMs));
      const until = pauses.pause(scope, cause, failure, forMs, endBy);
      const wanted = cause === 'rate-limited' ? until : at;
      const next = capWait({ deadline }, wanted, ctx.timing, at);
      // This answer met the job's last chance: no real try remains before its deadline.
      if (next === null)
        return expire(job, at, lastChanceSpent(deadline, failure.reason), maybeApplied, attempt);
      const retry = {
        now: at,
        nextAttemptAt: next.at,
        error: failure.reason,
        countAttempt: false,
        maybeApplied,
      };
      return (await outbox.retry(job, { ...retry, attempt })) ? 'deferred' : 'lost';
    };
    if (failure.class === 'auth' || failure.class === 'misconfigured') {
      // A refused key pauses its account when keys are per account; anything else pauses all delivery.
      const ofAccount = failure.class === 'auth' && ctx.perAccountKeys;
      return pauseScope(ofAccount ? job.account : ALL_ACCOUNTS, failure.class, ctx.authPauseMs);
    }
    // A 429 slows the sender, not the job: the key's scope (its account with per-account keys) pauses
    // for the wait asked, at least `backoff.minMs` (unless the deadline is here: then it expires below).
    if (failure.class === 'rate-limited' && (deadline === null || at < deadline)) {
      const asked = Math.min(MAX_RATE_LIMIT_PAUSE_MS, failure.retryAfterMs ?? DEFAULT_RATE_LIMIT_PAUSE_MS);
      const wait = Math.max(ctx.backoff.minMs, asked);
      return pauseScope(ctx.perAccountKeys ? job.account : ALL_ACCOUNTS, 'rate-limited', wait);
    }
    // The same 4xx for distinct jobs of the account, again and again: about us, not the jobs. The account
    // pauses (its probe meeting it again keeps the same outage) instead of dead-lettering the rest.
    if (failure.class === 'permanent' && failure.status !== null && ctx.refusals.refused(job, failure)) {
      return pauseScope(job.account, 'systematic-refusal', ctx.authPauseMs);
    }
    proven(job);
    if (failure.class === 'window-closed') {
      const reason = `the service says the window has closed: ${failure.reason}`;
      return expire(job, at, reason, maybeApplied, attempt);
    }
    if (failure.class === 'held' && (deadline === null || at < deadline)) {
      const outcome = await ctx.holds.hold(job, failure, at, attempt);
      if (outcome === 'held') counters.held += 1;
      return outcome;
    }
    if (failure.class === 'unmatched') {
      const { reason } = failure;
      if (!(await outbox.fail(job, { now: at, state: 'unmatched', reason, maybeApplied, attempt })))
        return 'lost';
      counters.unmatched += 1;
      emit('unmatched', { job, reason });
      return 'unmatched';
    }
    if (failure.class === 'permanent') {
      const { reason } = failure;
      const never = failure.neverApplied === true ? { neverApplied: true } : {};
      const dead = { now: at, state: 'dead' as const, reason, maybeApplied, attempt, ...never };
      if (!(await outbox.fail(job, dead))) return 'lost';
      counters.dead += 1;
      counters.failed += 1;
      emit('dead', { job, reason, status: failure.status });
      return 'dead';
    }
    // The service's Retry-After, when it sent one (any status), else the backoff; never past the last chance.
    const wanted = failure.retryAfterMs ?? backoffDelay(job.attempts, { ...ctx.backoff, random: ctx.random });
    const next = capWait({ deadline }, at + Math.max(ctx.backoff.minMs, wanted), ctx.timing, at);
    // This try was the last real one (a retry "at the deadline" would find it passed): expired now.
    if (next === null)
      return expire(job, at, lastChanceSpent(deadline, failure.reason), maybeApplied, attempt);
    const nextAttemptAt = next.at;
    const retried = { now: at, nextAttemptAt, error: failure.reason, maybeApplied, attempt };
    if (!(await outbox.retry(job, retried))) return 'lost';
    counters.retried += 1;
    emit('retried', {
      job,
      reason: failure.reason,
      status: failure.status,
      nextAttemptAt,
      lastChance: next.lastChance,
    });
    return 'retried';
  };

  /** A held order that awaits a decision: expired at its last chance, else held again until then. */
  const holdUndecided = async (job: Job): Promise<JobOutcome> => {
    const at = ctx.now();
    if (mustGoNow(job, ctx.timing, at) || (job.deadline !== null && at > job.deadline))
      return expire(job, at, HELD_UNDECIDED_REASON, false, undefined);
    const ok = await outbox.retry(job, {
      now: at,
      nextAttemptAt: heldUntil(job, at, 0, ctx.timing),
      error: job.lastError ?? HELD_UNDECIDED_REASON,
      countAttempt: false,
      hold: { campaignId: job.heldCampaignId },
    });
    return ok ? 'held' : 'lost';
  };

  return {
    counters,
    settle,

    async defer(job, { reason }) {
      // Due again at once, as after a refused key: the pause keeps this process from claiming it.
      const at = ctx.now();
      const ok = await outbox.retry(job, { now: at, nextAttemptAt: at, error: reason, countAttempt: false });
      return ok ? 'deferred' : 'lost';
    },

    undecided(job) {
      return ctx.holds.awaitsDecision(job) ? holdUndecided(job) : null;
    },

    async giveBackRequested(job, sentAt) {
      try {
        const at = ctx.now();
        const error = 'stopped while its request was under way; it may have been applied';
        await outbox.retry(job, {
          now: at,
          nextAttemptAt: at,
          error,
          countAttempt: false,
          maybeApplied: true,
          attempt: attemptOf({ sent: { startedAt: sentAt ?? at, status: null } }, at, 'stopped', error),
        });
      } catch (error) {
        emit('error', { error, during: 'release' });
      }
    },

    async release(jobs) {
      if (jobs.length === 0) return;
      try {
        await outbox.release(jobs, ctx.now());
      } catch (error) {
        emit('error', { error, during: 'release' });
      }
    },
  };
}

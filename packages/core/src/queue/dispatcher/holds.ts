/**
 * Held jobs: the service said a job's campaign is not on s2s, a problem of the campaign that the
 * advertiser fixes by switching it, not of the job. The job is held (`outbox.retry` with `hold`: still
 * `pending`, its attempt not counted, probed again after `holdProbeMs`, never past its deadline), the
 * problem is named once (`held`), and the first job of that account delivered afterwards releases the
 * rest (`outbox.releaseHeld`: due now), so they are delivered at once with no operator action.
 */
import type { EpochMs } from '../../policy.ts';
import { accountKey } from '../accounts.ts';
import type { ReleaseHeldOptions } from '../held-types.ts';
import type { AttemptRecord, Job } from '../job-types.ts';
import type { Outbox } from '../outbox-types.ts';
import { capWait, type WaitTiming } from '../wait-rule.ts';
import type { Failure } from './classify.ts';
import type { Emit } from './events.ts';
import type { JobOutcome } from './held-jobs.ts';

/** What holding needs. */
export interface HoldsContext {
  outbox: Pick<Outbox, 'retry' | 'releaseHeld' | 'features'>;
  emit: Emit;
  holdProbeMs: number;
  /** What a last chance leaves room for (`wait-rule.ts`): a probe is never later than the job's last chance. */
  timing: WaitTiming;
}

/** The held problems of a Dispatcher; see {@link createHolds}. */
export interface Holds {
  /** Whether the outbox can hold jobs (`features.holds`); without, a `held` failure is dead-lettered. */
  readonly supported: boolean;
  /** Holds a job whose send ended at `at` with a `held` failure; emits `held` once per problem. */
  hold(job: Job, failure: Failure, at: EpochMs, attempt: AttemptRecord | undefined): Promise<JobOutcome>;
  /** A job was delivered at `at` (`campaignId`: the campaign its answer named): releases what it proves fixed. */
  delivered(job: Job, campaignId: string | null, at: EpochMs): Promise<void>;
}

/** One problem this Dispatcher saw: an account's campaign (null: not named) not on s2s. */
interface Problem {
  account: string | null;
  campaignId: string | null;
  since: EpochMs;
  /** When a job of it was last held: a problem none of whose jobs was held for two probes is gone. */
  lastHeldAt: EpochMs;
}

const keyOf = (account: string | null, campaignId: string | null) =>
  `${accountKey(account)}\u0001${campaignId ?? ''}`;

/** Creates the holds of a Dispatcher, none known. */
export function createHolds(ctx: HoldsContext): Holds {
  const { outbox, emit } = ctx;
  const supported = outbox.features?.holds === true;
  /** Problems seen and not yet released, by account and campaign. */
  const problems = new Map<string, Problem>();
  /** Problems released by this Dispatcher (a released job delivered later does not release them again). */
  const released = new Set<string>();

  const hold: Holds['hold'] = async (job, failure, at, attempt) => {
    const campaignId = failure.campaignId ?? null;
    // Probed again after `holdProbeMs`, by its last chance at the latest; past that, it waits for its
    // deadline, when the overdue sweep expires it.
    const next = capWait(job, at + ctx.holdProbeMs, ctx.timing, at);
    const nextAttemptAt = next?.at ?? job.deadline ?? at;
    const ok = await outbox.retry(job, {
      now: at,
      nextAttemptAt,
      error: failure.reason,
      maybeApplied: failure.maybeApplied,
      attempt,
      hold: { campaignId },
    });
    if (!ok) return 'lost';
    const key = keyOf(job.account, campaignId);
    released.delete(key);
    const known = problems.get(key);
    // Its jobs all ended (expired, withdrawn) meanwhile: the problem is new again, and alerted again.
    if (known !== undefined && at - known.lastHeldAt <= 2 * ctx.holdProbeMs) {
      known.lastHeldAt = at;
      return 'held';
    }
    problems.set(key, { account: job.account, campaignId, since: job.heldAt ?? at, lastHeldAt: at });
    emit('held', {
      account: job.account,
      campaignId,
      reason: failure.reason,
      job,
      nextProbeAt: nextAttemptAt,
    });
    return 'held';
  };

  const delivered: Holds['delivered'] = async (job, campaignId, at) => {
    if (!supported) return;
    const account = accountKey(job.account);
    // The problems the delivery proves fixed: its campaign's and those of no known campaign, or (its
    // campaign unknown) all of its account's; and the one the job itself was held for.
    const fixed = [...problems.entries()].filter(
      ([, p]) =>
        accountKey(p.account) === account &&
        (campaignId === null || p.campaignId === null || p.campaignId === campaignId),
    );
    const ownKey = job.heldAt === null ? null : keyOf(job.account, job.heldCampaignId);
    const own = ownKey !== null && !released.has(ownKey) && !problems.has(ownKey);
    if (fixed.length === 0 && !own) return;
    for (const [key] of fixed) problems.delete(key);
    for (const [key] of fixed) released.add(key);
    if (ownKey !== null) released.add(ownKey);

    const selections: ReleaseHeldOptions[] =
      campaignId === null
        ? [{ now: at, account: job.account }]
        : [...new Set([campaignId, null, ...fixed.map(([, p]) => p.campaignId), job.heldCampaignId])].map(
            (c) => ({ now: at, account: job.account, campaignId: c }),
          );
    let count = 0;
    for (const selection of selections) count += await outbox.releaseHeld(selection);
    const since = Math.min(job.heldAt ?? at, ...fixed.map(([, p]) => p.since));
    emit('hold-released', {
      account: job.account,
      campaignId: campaignId ?? job.heldCampaignId,
      released: count,
      heldForMs: Math.max(0, at - since),
      job,
    });
  };

  return { supported, hold, delivered };
}

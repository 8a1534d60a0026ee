/**
 * Held jobs: the service said a job's campaign is not on s2s, a problem of the campaign that the
 * advertiser fixes by switching it, not of the job. The job is held (`outbox.retry` with `hold`: still
 * `pending`, its attempt not counted). A problem is one (account, campaign) pair, named once (`held`).
 *
 * What a held order gets once the campaign accepts s2s is `onSwitch`'s (`switch-watch.ts`): the pixel
 * may have billed it meanwhile. With `'send'`, a problem is probed by one of its jobs: the probe is due
 * again after `holdProbeMs`, every other job waits until its own last chance ({@link heldUntil}), so the
 * service sees one refused request per problem per `holdProbeMs`; it is released (`outbox.releaseHeld`:
 * its jobs due now) by its probe's delivery or by a delivery whose answer names that campaign for that
 * account. With `'ask'` or `'drop'` a held order is never sent again without a decision: it waits past its
 * deadline (where the send expires it, unsent) unless a decision comes first, and the switch is seen by the
 * orders created after it (sent as any job is).
 */
import { DEFAULT_CONFIRM_WINDOW_MS, type EpochMs } from '../../policy.ts';
import type { AttemptRecord, Job } from '../job-types.ts';
import type { Outbox } from '../outbox-types.ts';
import { switchKey } from '../switch-rules.ts';
import type { OnSwitch } from '../switch-types.ts';
import { capWait, type WaitTiming } from '../wait-rule.ts';
import type { Failure } from './classify.ts';
import type { Emit } from './events.ts';
import type { JobOutcome } from './held-jobs.ts';
import { type OnSwitchResolver, onSwitchFor } from './switch-options.ts';
import type { SwitchWatch } from './switch-watch.ts';

/** What holding needs. */
export interface HoldsContext {
  outbox: Pick<Outbox, 'retry' | 'releaseHeld' | 'features'>;
  emit: Emit;
  holdProbeMs: number;
  /** What a last chance leaves room for (`wait-rule.ts`): a probe is never later than the job's last chance. */
  timing: WaitTiming;
  /** What a problem's held orders get at its switch; only `'send'` probes with them. */
  onSwitch: OnSwitch | OnSwitchResolver;
  /** Where a delivery naming a campaign is told, to see a switch. */
  switches: SwitchWatch;
}

/** The held problems of a Dispatcher; see {@link createHolds}. */
export interface Holds {
  /** Whether the outbox can hold jobs (`features.holds`); without, a `held` failure is dead-lettered. */
  readonly supported: boolean;
  /** Holds a job whose send ended at `at` with a `held` failure; emits `held` once per problem. */
  hold(job: Job, failure: Failure, at: EpochMs, attempt: AttemptRecord | undefined): Promise<JobOutcome>;
  /** Whether a held job awaits a decision: its problem's `onSwitch` is not `'send'` (it is never sent so). */
  awaitsDecision(job: Job): boolean;
  /**
   * A job was delivered at `at` (`campaignId`: the campaign its answer named): releases what it proves
   * fixed, and tells the switch watch. Null at once when there is nothing to release or ask (nearly every
   * delivery: no promise is made for it).
   */
  delivered(job: Job, campaignId: string | null, at: EpochMs): Promise<void> | null;
}

/**
 * When a held job that is not its problem's probe is due again: at its last chance (`wait-rule.ts`), so it
 * gets a real try before its deadline whatever the probe meets; after `probeMs` without a deadline; past its
 * last chance, at its deadline (the send expires it).
 */
export function heldUntil(
  job: Pick<Job, 'deadline'>,
  at: EpochMs,
  probeMs: number,
  timing: WaitTiming,
): EpochMs {
  return capWait(job, job.deadline ?? at + probeMs, timing, at)?.at ?? job.deadline ?? at;
}

/** One problem this Dispatcher saw: an account's campaign (null: not named) not on s2s. */
interface Problem {
  account: string | null;
  campaignId: string | null;
  since: EpochMs;
  /** The job that probes it (due again after `holdProbeMs`); the others wait for its answer. */
  probeJobId: string;
  /** When a job of it was last held: a problem none of whose jobs was held for two probes is gone. */
  lastHeldAt: EpochMs;
}

const keyOf = switchKey;

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
    const key = keyOf(job.account, campaignId);
    const known = problems.get(key);
    const sendsHeld = onSwitchFor(ctx.onSwitch, job.account, campaignId) === 'send';
    // Its jobs all ended (expired, withdrawn) meanwhile: the problem is new again, and alerted again. Without
    // probes (`onSwitch` not `'send'`) only fresh orders are held, as they come: a held order outlives no
    // confirmation window.
    const forgetAfter = sendsHeld ? 2 * ctx.holdProbeMs : DEFAULT_CONFIRM_WINDOW_MS;
    const current = known !== undefined && at - known.lastHeldAt <= forgetAfter ? known : undefined;
    // Named before the store answers, so that jobs of the problem refused at the same time (concurrent
    // sends) wait for this probe rather than each becoming one.
    const problem = current ?? {
      account: job.account,
      campaignId,
      since: job.heldAt ?? at,
      probeJobId: job.id,
      lastHeldAt: at,
    };
    const isNew = current === undefined;
    if (isNew) problems.set(key, problem);
    const probes = sendsHeld && problem.probeJobId === job.id;
    // The probe goes again after `holdProbeMs`, by its last chance at the latest (past that, at its
    // deadline, when the send expires it); the others wait for its answer, at most until their last chance.
    // Without `'send'`, a held order waits until its last chance (where, undecided, it expires unsent):
    // only a decision makes it due sooner.
    const nextAttemptAt = !sendsHeld
      ? heldUntil(job, at, ctx.holdProbeMs, ctx.timing)
      : probes
        ? (capWait(job, at + ctx.holdProbeMs, ctx.timing, at)?.at ?? job.deadline ?? at)
        : heldUntil(job, at, ctx.holdProbeMs, ctx.timing);
    const ok = await outbox.retry(job, {
      now: at,
      nextAttemptAt,
      error: failure.reason,
      maybeApplied: failure.maybeApplied,
      attempt,
      hold: { campaignId },
    });
    if (!ok) {
      // Another worker took the job: it cannot probe for this Dispatcher.
      if (isNew && problems.get(key) === problem) problems.delete(key);
      return 'lost';
    }
    released.delete(key);
    if (!isNew) {
      if (probes || !sendsHeld) problem.lastHeldAt = at;
      return 'held';
    }
    emit('held', {
      account: job.account,
      campaignId,
      reason: failure.reason,
      job,
      nextProbeAt: nextAttemptAt,
    });
    return 'held';
  };

  const delivered: Holds['delivered'] = (job, campaignId, at) => {
    if (!supported) return null;
    const fixed = fixedBy(job, campaignId);
    // Then the switch (`switch-watch.ts`): with `'send'` its held orders were just released here, and
    // the decision's ledger rows name the option; with `'ask'` or `'drop'` nothing was released.
    const watch = () => (campaignId === null ? null : ctx.switches.delivered(job.account, campaignId, at));
    if (fixed === null) return watch();
    return release(job, campaignId, at, fixed).then(() => watch() ?? undefined);
  };

  /**
   * The problems a delivery proves fixed (null: none): the problem it probed (its own), and the one of the
   * campaign its answer named, for its account. An answer that names no campaign proves nothing of another
   * problem. Its own problem is released unless this Dispatcher released it already (a released job
   * delivered later); the named campaign's only when this Dispatcher holds it. Only a problem whose held
   * orders `onSwitch` sends is released by a delivery.
   */
  const fixedBy = (job: Job, campaignId: string | null): Map<string, string | null> | null => {
    const sends = (c: string | null) => onSwitchFor(ctx.onSwitch, job.account, c) === 'send';
    const own = job.heldAt === null ? null : keyOf(job.account, job.heldCampaignId);
    const ownFixed = own !== null && sends(job.heldCampaignId) && (problems.has(own) || !released.has(own));
    const named = campaignId === null ? null : keyOf(job.account, campaignId);
    const namedFixed = named !== null && problems.has(named) && sends(campaignId);
    if (!ownFixed && !namedFixed) return null;
    const fixed = new Map<string, string | null>();
    if (ownFixed) fixed.set(own, job.heldCampaignId);
    if (namedFixed) fixed.set(named, campaignId);
    return fixed;
  };

  /** Releases the problems `fixed` (from {@link fixedBy}) that a delivery proved fixed. */
  const release = async (
    job: Job,
    campaignId: string | null,
    at: EpochMs,
    fixed: Map<string, string | null>,
  ) => {
    let since = job.heldAt ?? at;
    for (const key of fixed.keys()) {
      since = Math.min(since, problems.get(key)?.since ?? since);
      problems.delete(key);
      released.add(key);
    }
    let count = 0;
    for (const c of new Set(fixed.values()))
      count += await outbox.releaseHeld({ now: at, account: job.account, campaignId: c });
    emit('hold-released', {
      account: job.account,
      campaignId: campaignId ?? job.heldCampaignId,
      released: count,
      heldForMs: Math.max(0, at - since),
      job,
    });
  };

  const awaitsDecision: Holds['awaitsDecision'] = (job) =>
    supported && job.heldAt !== null && onSwitchFor(ctx.onSwitch, job.account, job.heldCampaignId) !== 'send';

  return { supported, hold, delivered, awaitsDecision };
}

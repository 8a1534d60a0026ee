/**
 * The Dispatcher's typed events and a minimal emitter for them (no `node:events`: core runs on the edge).
 * Payloads carry jobs and reasons, never the API key: reasons are built from the status and the
 * service's `detail`, with bearer-shaped strings redacted.
 */
import type { EpochMs } from '../../policy.ts';
import type { ConversionRequest } from '../conversion-request.ts';
import type { AttemptRecord, Job } from '../job-types.ts';
import type { PauseCause } from '../outbox-types.ts';
import type { OnSwitch } from '../switch-types.ts';

/** Payload of each Dispatcher event. */
export interface DispatcherEvents {
  /** The service accepted the job. `campaignId` is the campaign a confirm's answer named (null: unknown). */
  delivered: { job: Job; campaignId: string | null; at: EpochMs };
  /**
   * A request ended (any outcome): what the job's history keeps of it. For metrics (send latency by
   * outcome). Every request is one attempt: a blip is retried as the job's next attempt, with backoff.
   */
  attempt: { job: Job; attempt: AttemptRecord };
  /** A transient failure; the job goes back to `pending` until `nextAttemptAt` (≤ its deadline). */
  retried: { job: Job; reason: string; status: number | null; nextAttemptAt: EpochMs; lastChance: boolean };
  /** A permanent failure: the job is `dead` (replayable) with the service's reason. */
  dead: { job: Job; reason: string; status: number | null };
  /** The job's deadline passed before it could be sent; it is `expired` and was not sent (again). */
  expired: { job: Job; reason: string };
  /**
   * A reversal the service answered 404 (with its `detail`) in the campaign its own confirmation answer
   * named: it had no such conversion, so there is nothing to reverse. The job is `unmatched` (final).
   */
  unmatched: { job: Job; reason: string };
  /**
   * All delivery is paused until `until`. `cause` `auth` (401/403, an alert: the API key is missing,
   * revoked or lacks scope), `misconfigured` (an answer that is not the service's: base URL, proxy),
   * `rate-limited` (a 429 without `apiKeyFor`: the service's wait, then one probe at a time). `until` is
   * never after the last chance of the earliest deadline the pause holds back (`wait-rule.ts`).
   */
  paused: { status: number | null; reason: string; until: EpochMs; cause: PauseCause };
  /**
   * An open job's deadline is now within `atRiskWithinMs` (emitted once per job by a running Dispatcher,
   * whose watch looks every `watchIntervalMs`): deliver it, or see why it is stuck, before `deadline`.
   */
  'at-risk': { job: Job; deadline: EpochMs; inMs: number };
  /** A probe succeeded after a pause: delivery runs again. */
  resumed: { pausedForMs: number };
  /**
   * With `apiKeyFor`: the key of one account was refused (401/403, `cause` `auth`) or none is known, or
   * the service answered one of its jobs 429 (`rate-limited`); that account's jobs wait until `until`,
   * when one probes again. Other accounts keep delivering. Once per outage.
   */
  'account-paused': {
    account: string | null;
    status: number | null;
    reason: string;
    until: EpochMs;
    cause: PauseCause;
  };
  /** A probe of a paused account was answered otherwise: its delivery runs again. */
  'account-resumed': { account: string | null; pausedForMs: number };
  /**
   * A job's click time or creation time lies `skewMs` in this worker's future: the host that stamped it
   * runs ahead. The job is sent by `deadline` (its own, moved back by the skew; never later). Once per job.
   */
  'clock-skew': { job: Job; skewMs: number; stamp: 'clickedAt' | 'createdAt'; deadline: EpochMs | null };
  /**
   * The service said a job's campaign is not on s2s: the job is held (`pending`, its attempt not counted)
   * and probed again at `nextProbeAt`. Emitted once per problem (account and campaign) until it is
   * released, not once per job: an alert ("switch campaign X to s2s"). `campaignId` is the campaign the
   * answer named, or null.
   */
  held: { account: string | null; campaignId: string | null; reason: string; job: Job; nextProbeAt: EpochMs };
  /**
   * A job of a held problem was delivered (the campaign is on s2s again): the account's held jobs of that
   * campaign (and those held without a known campaign) were made due now; `released` is how many.
   */
  'hold-released': {
    account: string | null;
    campaignId: string | null;
    released: number;
    /** Since the problem was first seen by this Dispatcher (or the delivered job was first held). */
    heldForMs: number;
    job: Job;
  };
  /**
   * A campaign whose orders are held (see `held`) was seen accepting s2s: a delivery's answer named it for
   * the account. With `onSwitch` `'ask'` the held orders wait for an operator's `postback held send|drop`
   * (an alert: the pixel may have billed them; their windows keep running); with `'send'` or `'drop'`,
   * `decided` of them were sent or cancelled. Once per switch, whichever worker saw it first.
   */
  'switch-seen': {
    account: string | null;
    campaignId: string;
    at: EpochMs;
    onSwitch: OnSwitch;
    decided: number;
  };
  /**
   * The job's account is in shadow mode: the job was recorded as it would be sent (`request`, its path and
   * body, no key) and nothing was sent (see [Shadow mode](#shadow-mode-moving-from-pixel-to-s2s)).
   */
  shadowed: { job: Job; at: EpochMs; request: ConversionRequest };
  /** The Dispatcher itself hit a problem (the outbox unreachable, a listener threw). It keeps running. */
  error: {
    error: unknown;
    during: 'claim' | 'transition' | 'heartbeat' | 'release' | 'listener' | 'watch' | 'tracing' | 'prune';
  };
}

/** An event name. */
export type DispatcherEventName = keyof DispatcherEvents;

/** A tiny typed emitter (internal to the Dispatcher); a throwing listener never disturbs delivery. */
export function createEmitter() {
  const listeners = new Map<DispatcherEventName, Set<(payload: never) => void>>();
  const emit = <K extends DispatcherEventName>(name: K, payload: DispatcherEvents[K]): void => {
    for (const fn of listeners.get(name) ?? []) {
      try {
        (fn as (p: DispatcherEvents[K]) => void)(payload);
      } catch (error) {
        if (name !== 'error') emit('error', { error, during: 'listener' });
      }
    }
  };
  const on = <K extends DispatcherEventName>(
    name: K,
    fn: (payload: DispatcherEvents[K]) => void,
  ): (() => void) => {
    const set = listeners.get(name) ?? new Set();
    set.add(fn as (payload: never) => void);
    listeners.set(name, set);
    return () => {
      set.delete(fn as (payload: never) => void);
    };
  };
  return { emit, on };
}

/** The `emit` function of {@link createEmitter}, as the Dispatcher's parts receive it. */
export type Emit = ReturnType<typeof createEmitter>['emit'];

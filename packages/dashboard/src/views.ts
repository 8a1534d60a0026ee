/**
 * What the dashboard's JSON API shows of the outbox: jobs without anything secret (the click token
 * shortened, no lease token), dead jobs grouped by their normalised reason, and the overview of counts
 * and deadlines. Pure reads over the `Outbox` interface, so every store gets the same pages.
 */
import {
  type AccountPause,
  type HeldProblem,
  JOB_STATES,
  type Job,
  type Outbox,
  type WorkerBeat,
} from '@postback/core';
import type { SwitchSeen } from '@postback/core/store';
import type { Activity } from './activity.ts';
import type { ResolvedDashboardOptions } from './options.ts';

/** A job as the dashboard shows it. */
export interface JobView {
  id: string;
  kind: Job['kind'];
  orderId: string;
  /** The advertiser account (a reference chosen by the app, never a key), or null for none. */
  account: string | null;
  state: Job['state'];
  attempts: number;
  createdAt: number;
  updatedAt: number;
  nextAttemptAt: number;
  deadline: number | null;
  lastError: string | null;
  deliveredAt: number | null;
  campaignId: string | null;
  /** A refund's campaign source: `answer` (the service's confirmation answer), `caller`; null otherwise. */
  campaignFrom: 'answer' | 'caller' | null;
  maybeAppliedAt: number | null;
  leaseExpiresAt: number | null;
  valueMicros: number | null;
  clickedAt: number | null;
  /** The first characters of the click token and an ellipsis: enough to recognise, never to replay. */
  clickToken: string | null;
}

/** The first 6 characters of a token, then `…` (nothing of a token shorter than 12). */
export const shortToken = (token: string): string => (token.length < 12 ? '…' : `${token.slice(0, 6)}…`);

/**
 * The job without its secrets.
 *
 * @example
 * ```ts
 * jobView(job).clickToken; // 'ct_ab1…'
 * ```
 */
export function jobView(job: Job): JobView {
  const confirm = job.kind === 'confirm' ? job : null;
  return {
    id: job.id,
    kind: job.kind,
    orderId: job.orderId,
    account: job.account ?? null,
    state: job.state,
    attempts: job.attempts,
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
    nextAttemptAt: job.nextAttemptAt,
    deadline: job.deadline,
    lastError: job.lastError,
    deliveredAt: job.deliveredAt,
    campaignId: job.campaignId,
    campaignFrom: job.kind === 'refund' ? job.campaignFrom : null,
    maybeAppliedAt: job.maybeAppliedAt,
    leaseExpiresAt: job.lease?.expiresAt ?? null,
    valueMicros: confirm?.valueMicros ?? null,
    clickedAt: confirm?.clickedAt ?? null,
    clickToken: confirm === null ? null : shortToken(confirm.clickToken),
  };
}

/**
 * A reason with what varies between jobs of one cause (ids, numbers, quoted values, times) replaced by
 * placeholders, so jobs dead for the same cause fall in one group.
 *
 * @example
 * ```ts
 * normaliseReason('order ord_123 not found (took 52 ms)'); // 'order <id> not found (took <n> ms)'
 * ```
 */
export function normaliseReason(reason: string | null): string {
  if (reason === null || reason.trim() === '') return '(no reason)';
  return reason
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z?/g, '<time>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<id>')
    .replace(/(['"`])[^'"`]{0,200}\1/g, '$1…$1')
    .replace(/\b[A-Za-z]+_[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*\b/g, '<id>')
    .replace(/\b[0-9a-f]{16,}\b/gi, '<id>')
    .replace(/\b\d+(\.\d+)?\b/g, '<n>')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Dead jobs of one cause. */
export interface DeadGroup {
  /** Stable key of the group (`<status> <reason>`), used to replay or purge it. */
  key: string;
  /** HTTP status of the last attempt, or null (none recorded, or the store keeps no history). */
  status: number | null;
  reason: string;
  count: number;
  /** The ids of the group's jobs (at most the scanned ones). */
  ids: string[];
  /** A sample reason as stored (already redacted). */
  example: string | null;
}

const groupKey = (status: number | null, reason: string) => `${status ?? '-'} ${reason}`;

/** Runs `fn` over `items`, `width` at a time. */
async function mapLimited<T, R>(
  items: readonly T[],
  width: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  });
  await Promise.all(lanes);
  return out;
}

/**
 * Dead jobs grouped by the HTTP status of their last attempt and their normalised reason, largest group
 * first. Reads at most `max` dead jobs.
 *
 * @example
 * ```ts
 * const { groups, scanned } = await deadGroups(outbox, 1_000);
 * ```
 */
export async function deadGroups(
  outbox: Outbox,
  max: number,
): Promise<{ groups: DeadGroup[]; scanned: number }> {
  const jobs: Job[] = [];
  while (jobs.length < max) {
    const limit = Math.min(1_000, max - jobs.length);
    const page = await outbox.listJobs({ states: ['dead'], limit, offset: jobs.length });
    jobs.push(...page);
    if (page.length < limit) break;
  }
  const statuses = outbox.features.attemptHistory
    ? await mapLimited(jobs, 8, async (job) => (await outbox.history(job.id)).at(-1)?.status ?? null)
    : jobs.map(() => null);
  const groups = new Map<string, DeadGroup>();
  jobs.forEach((job, i) => {
    const status = statuses[i] ?? null;
    const reason = normaliseReason(job.lastError);
    const key = groupKey(status, reason);
    const group = groups.get(key) ?? { key, status, reason, count: 0, ids: [], example: job.lastError };
    group.count += 1;
    group.ids.push(job.id);
    groups.set(key, group);
  });
  const sorted = [...groups.values()].sort((a, b) => b.count - a.count || a.key.localeCompare(b.key));
  return { groups: sorted, scanned: jobs.length };
}

/** One bar of the deadline chart: open jobs with at most `withinMs` left and more than the bar before. */
export interface DeadlineBar {
  /** Upper bound (ms), or null for the last bar ("later"). */
  withinMs: number | null;
  count: number;
  /** Whether these jobs are inside the at-risk window. */
  atRisk: boolean;
}

/** One account paused by the workers' Dispatchers, merged over the heart-beats that report it. */
export interface PausedAccountView extends AccountPause {
  /** The workers whose latest beat reports the account paused. */
  workers: string[];
}

/**
 * The accounts paused now according to the live workers' latest heart-beats (a stopped worker's last
 * beat is left out), one entry per account: the latest pause end and the reason of the beat that saw the
 * pause last, oldest pause first.
 *
 * @example
 * ```ts
 * pausedAccounts(await outbox.workers({ now, sinceMs: 600_000 }));
 * ```
 */
export function pausedAccounts(beats: readonly WorkerBeat[]): PausedAccountView[] {
  const byAccount = new Map<string, PausedAccountView & { seenAt: number }>();
  for (const beat of beats) {
    if (beat.state === 'stopped') continue;
    for (const pause of beat.pausedAccounts ?? []) {
      const key = pause.account === null ? '' : `=${pause.account}`;
      const known = byAccount.get(key);
      if (known === undefined) {
        byAccount.set(key, { ...pause, workers: [beat.workerId], seenAt: beat.at });
        continue;
      }
      known.workers.push(beat.workerId);
      known.since = Math.min(known.since, pause.since);
      known.until = Math.max(known.until, pause.until);
      if (beat.at > known.seenAt)
        Object.assign(known, { reason: pause.reason, status: pause.status, seenAt: beat.at });
    }
  }
  return [...byAccount.values()]
    .sort((a, b) => a.since - b.since)
    .map(({ seenAt: _, ...view }) => ({ ...view, workers: view.workers.sort() }));
}

/** A held problem as the overview shows it. */
export interface HeldView extends HeldProblem {
  /** When a delivery showed its campaign accepting s2s (epoch ms), or null: not seen. */
  switchSeenAt: number | null;
  /** Its orders wait for an operator's decision (the switch was seen): Send or Drop. */
  awaitingDecision: boolean;
}

/**
 * The held problems with the switch seen for each one, as `postback held` shows them.
 *
 * @example
 * ```ts
 * withSwitches(stats.held ?? [], await outbox.switches?.list() ?? []);
 * ```
 */
export function withSwitches(held: readonly HeldProblem[], switches: readonly SwitchSeen[]): HeldView[] {
  return held.map((problem) => {
    const seen = switches.find((s) => s.account === problem.account && s.campaignId === problem.campaignId);
    return { ...problem, switchSeenAt: seen?.at ?? null, awaitingDecision: seen !== undefined };
  });
}

/** How far back the overview lists workers (a stopped or silent worker stays listed this long). */
const WORKERS_LISTED_WITHIN_MS = 10 * 60_000;

/** Whether a heart-beat shows a worker delivering now: not stopped, and seen within `seenWithinMs`. */
export const isLive = (beat: Pick<WorkerBeat, 'state' | 'at'>, now: number, seenWithinMs: number): boolean =>
  beat.state !== 'stopped' && beat.at >= now - seenWithinMs;

/**
 * Everything the overview page shows; the counts read are also recorded in `activity`.
 *
 * @example
 * ```ts
 * const view = await overview(outbox, options, activity, Date.now());
 * ```
 */
export async function overview(
  outbox: Outbox,
  o: Pick<
    ResolvedDashboardOptions,
    'atRiskWithinMs' | 'deadlineBucketsMs' | 'maxGroupedDead' | 'workerSeenWithinMs'
  >,
  activity: Activity,
  now: number,
) {
  const stats = await outbox.stats(now, {
    atRiskWithinMs: o.atRiskWithinMs,
    deadlineBucketsMs: o.deadlineBucketsMs,
  });
  activity.record(now, stats.counts);
  const open = stats.counts.pending + stats.counts.inflight;
  let below = 0;
  const bars: DeadlineBar[] = stats.deadlineBuckets.map((b) => {
    const bar = { withinMs: b.withinMs, count: b.count - below, atRisk: b.withinMs <= o.atRiskWithinMs };
    below = b.count;
    return bar;
  });
  bars.push({ withinMs: null, count: Math.max(0, open - below), atRisk: false });
  const dead =
    stats.counts.dead > 0 ? await deadGroups(outbox, o.maxGroupedDead) : { groups: [], scanned: 0 };
  const sinceMs = Math.max(WORKERS_LISTED_WITHIN_MS, o.workerSeenWithinMs);
  // A failed read of the heart-beats is "unknown", never "no worker".
  const beats = outbox.features.heartbeats ? await outbox.workers({ now, sinceMs }).catch(() => null) : null;
  const heartbeats = beats !== null;
  const workers = beats ?? [];
  const switches = stats.held?.length ? await outbox.switches?.list() : undefined;
  const live = workers.filter((w) => isLive(w, now, o.workerSeenWithinMs)).length;
  return {
    now,
    counts: stats.counts,
    total: JOB_STATES.reduce((sum, s) => sum + stats.counts[s], 0),
    oldestPendingAt: stats.oldestPendingAt,
    nearestDeadline: stats.nearestDeadline,
    atRisk: stats.atRisk,
    deadline: bars,
    dead,
    workers: workers.map((w) => ({
      workerId: w.workerId,
      at: w.at,
      state: w.state,
      version: w.version,
      live: isLive(w, now, o.workerSeenWithinMs),
      pausedAccounts: w.pausedAccounts ?? [],
    })),
    pausedAccounts: pausedAccounts(workers),
    /**
     * Open jobs held because their campaign is not on s2s, one entry per account and campaign, with when
     * the campaign was seen accepting s2s (then its orders await a decision).
     */
    held: withSwitches(stats.held ?? [], switches ?? []),
    /** Whether the store keeps switches, so held orders can be decided here (`api/held-send|drop`). */
    switches: outbox.switches !== undefined,
    /**
     * Is anyone delivering? `noWorker`: open jobs wait and no live worker beat within `seenWithinMs`
     * (`heartbeats` false: the store keeps none, or they could not be read, so nobody can tell).
     */
    delivery: {
      heartbeats,
      liveWorkers: live,
      seenWithinMs: o.workerSeenWithinMs,
      noWorker: heartbeats && open > 0 && live === 0,
    },
    activity: activity.series(now),
    features: outbox.features,
  };
}

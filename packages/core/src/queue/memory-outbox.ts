/**
 * An in-memory `Outbox`: the reference implementation of the contract (it passes `describeOutbox`), and
 * the store for tests, demos and edge functions that deliver within one process. Nothing survives a
 * restart: production uses SQLite, Postgres or SQS.
 */
import { z } from 'zod';
import { OutboxClosedError } from '../errors.ts';
import { parseOptions } from '../parse-options.ts';
import { type EpochMs, windowPolicySchema } from '../policy.ts';
import { accountKey, byClaimUrgency, claimTier, takeInTurns } from './accounts.ts';
import {
  checkBeat,
  checkClaim,
  checkComplete,
  checkEpoch,
  checkExtendLease,
  checkFail,
  checkListDead,
  checkPurge,
  checkRelease,
  checkReplay,
  checkRetry,
  checkWorkersQuery,
} from './call-checks.ts';
import { type AttemptRecord, type ConfirmJob, JOB_STATES, type Job, type RefundJob } from './job-types.ts';
import {
  claimJob,
  completeJob,
  extendJobLease,
  failJob,
  holdsLease,
  isClaimable,
  newConfirmJob,
  newLeaseToken,
  releaseJob,
  replayJob,
  retryJob,
} from './jobs.ts';
import {
  appendAttempt,
  byUrgency,
  countDeadline,
  isAtRisk,
  isOpenJob,
  matchesJobFilter,
  prunableAt,
  resolveJobFilter,
  resolveStatsOptions,
  validatePruneOptions,
} from './operator-rules.ts';
import type {
  ClaimOptions,
  ConfirmInput,
  EnqueueResult,
  ListDeadOptions,
  Outbox,
  OutboxFeatures,
  OutboxStats,
  RefundInput,
  RefundOutcome,
  WorkerBeat,
} from './outbox-types.ts';
import { planRefund, refundAfterConfirm } from './refund-rules.ts';

/** Prefix of the ids the memory outbox assigns. @defaultValue "job_" */
export const DEFAULT_MEMORY_ID_PREFIX = 'job_';

const memoryOutboxOptionsSchema = z.strictObject({
  /** Windows used to stamp deadlines. @defaultValue DEFAULT_WINDOW_POLICY */
  policy: windowPolicySchema,
  /** Clock for `createdAt` and validation. @defaultValue Date.now */
  now: z
    .custom<() => EpochMs>((v) => typeof v === 'function', 'must be a function returning epoch ms')
    .optional(),
  /** @defaultValue {@link DEFAULT_MEMORY_ID_PREFIX} */
  idPrefix: z.string().max(32).optional(),
});

/** Options of {@link createMemoryOutbox}. */
export type MemoryOutboxOptions = z.input<typeof memoryOutboxOptionsSchema>;

/** The order id and account of an input not yet validated (validation reports what is wrong with them). */
function orderOf(input: unknown): { orderId: unknown; account: string | null } {
  const record = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  return { orderId: record.orderId, account: typeof record.account === 'string' ? record.account : null };
}

function copy<J extends Job>(job: J): J {
  return { ...job, lease: job.lease === null ? null : { ...job.lease } };
}

/**
 * Creates an in-memory {@link Outbox}. Returned jobs are copies: mutating them changes nothing stored.
 *
 * @example
 * ```ts
 * const outbox = createMemoryOutbox();
 * await outbox.confirm({ orderId: 'ord_1', valueMicros: 12_340_000, click });
 * const dispatcher = createDispatcher({ outbox, client });
 * ```
 */
export function createMemoryOutbox(options: MemoryOutboxOptions = {}): Outbox {
  const parsed = parseOptions(memoryOutboxOptionsSchema, options);
  const policy = parsed.policy;
  const now = parsed.now ?? Date.now;
  const idPrefix = parsed.idPrefix ?? DEFAULT_MEMORY_ID_PREFIX;

  // Insertion order of `jobs` is creation order, which `listDead` pages by.
  const jobs = new Map<string, Job>();
  // Keyed by `orderKey(account, orderId)`: an order is its account and its order id together.
  const byOrder = new Map<string, { confirm?: string; refund?: string }>();
  const histories = new Map<string, AttemptRecord[]>();
  const beats = new Map<string, WorkerBeat>();
  let sequence = 0;
  let closed = false;
  /** The account served last by `claim`: the next claim's turns start after it. */
  let cursor: string | undefined;

  // Ids of pending and inflight jobs: the only ones `claim` has to look at, however many are delivered.
  const live = new Set<string>();
  /** The same ids by account (`accountKey`), each in creation order: a claim's turns read a few of each. */
  const liveByAccount = new Map<string, Set<string>>();
  /**
   * Lower bounds of the earliest lease expiry of an inflight job and the earliest deadline of a pending
   * one: while both lie beyond a claim's horizon, no job can be retaken or urgent and the claim skips the
   * pass over every open job. Lowered on every write, made exact again by each such pass.
   */
  let leasesFrom = Number.POSITIVE_INFINITY;
  let deadlinesFrom = Number.POSITIVE_INFINITY;
  const put = (job: Job) => {
    jobs.set(job.id, job);
    const key = accountKey(job.account);
    if (job.state === 'inflight' && job.lease !== null)
      leasesFrom = Math.min(leasesFrom, job.lease.expiresAt);
    if (job.state === 'pending' && job.deadline !== null)
      deadlinesFrom = Math.min(deadlinesFrom, job.deadline);
    if (job.state === 'pending' || job.state === 'inflight') {
      live.add(job.id);
      const ids = liveByAccount.get(key) ?? new Set<string>();
      ids.add(job.id);
      liveByAccount.set(key, ids);
    } else unlive(job.id, key);
  };
  const unlive = (id: string, key: string) => {
    live.delete(id);
    const ids = liveByAccount.get(key);
    if (ids === undefined) return;
    ids.delete(id);
    if (ids.size === 0) liveByAccount.delete(key);
  };

  const nextId = () => `${idPrefix}${(++sequence).toString().padStart(12, '0')}`;
  // Neither an account nor an order id may hold a control character, so U+0001 cannot be ambiguous.
  const orderKey = (account: string | null, orderId: string) => `${accountKey(account)}\u0001${orderId}`;
  const confirmOf = (account: string | null, orderId: string): ConfirmJob | null => {
    const id = byOrder.get(orderKey(account, orderId))?.confirm;
    return id === undefined ? null : ((jobs.get(id) as ConfirmJob | undefined) ?? null);
  };
  const refundOf = (account: string | null, orderId: string): RefundJob | null => {
    const id = byOrder.get(orderKey(account, orderId))?.refund;
    return id === undefined ? null : ((jobs.get(id) as RefundJob | undefined) ?? null);
  };
  const index = (job: Job) => {
    const key = orderKey(job.account, job.orderId);
    const entry = byOrder.get(key) ?? {};
    entry[job.kind] = job.id;
    byOrder.set(key, entry);
  };
  const assertOpen = () => {
    if (closed) throw new OutboxClosedError('the memory outbox');
  };

  /** Applies a transition to the stored job only when `claimed` still holds its lease; keeps its attempt. */
  const transition = (claimed: Job, apply: (stored: Job) => Job, attempt?: AttemptRecord | null): boolean => {
    const stored = jobs.get(claimed.id);
    if (stored === undefined || !holdsLease(stored, claimed)) return false;
    const next = apply(stored);
    put(next);
    if (attempt !== undefined && attempt !== null)
      histories.set(next.id, appendAttempt(histories.get(next.id) ?? [], attempt));
    followConfirm(next);
    return true;
  };
  const lastStatus = (id: string): number | null => histories.get(id)?.at(-1)?.status ?? null;
  const forget = (job: Job) => {
    jobs.delete(job.id);
    unlive(job.id, accountKey(job.account));
    histories.delete(job.id);
    const key = orderKey(job.account, job.orderId);
    const entry = byOrder.get(key);
    if (entry !== undefined) {
      delete entry[job.kind];
      if (entry.confirm === undefined && entry.refund === undefined) byOrder.delete(key);
    }
  };

  /** Keeps the "refund follows its confirm" rule after a confirm changes state. */
  const followConfirm = (job: Job) => {
    if (job.kind !== 'confirm') return;
    const refund = refundOf(job.account, job.orderId);
    if (refund === null) return;
    const next = refundAfterConfirm(refund, job, policy);
    if (next !== refund) put(next);
  };

  const features: OutboxFeatures = {
    attemptHistory: true,
    listableStates: JOB_STATES,
    heartbeats: true,
    prune: true,
    fairClaims: true,
  };

  const outbox: Outbox = {
    features,

    async confirm(input: ConfirmInput): Promise<EnqueueResult<ConfirmJob>> {
      assertOpen();
      const at = now();
      const { orderId, account } = orderOf(input);
      const existing = typeof orderId === 'string' ? confirmOf(account, orderId) : null;
      // Validate even a duplicate, so a malformed retry of a good request is still reported.
      const job = newConfirmJob(input, { now: at, id: existing?.id ?? nextId(), policy });
      if (existing !== null) return { created: false, job: copy(existing) };
      put(job);
      index(job);
      return { created: true, job: copy(job) };
    },

    async refund(input: RefundInput): Promise<RefundOutcome> {
      assertOpen();
      const { orderId, account } = orderOf(input);
      const confirm = typeof orderId === 'string' ? confirmOf(account, orderId) : null;
      const refund = typeof orderId === 'string' ? refundOf(account, orderId) : null;
      const outcome = planRefund(input, { now: now(), id: `${idPrefix}pending`, policy, confirm, refund });
      switch (outcome.outcome) {
        case 'enqueued': {
          const job: RefundJob = { ...outcome.job, id: nextId() };
          put(job);
          index(job);
          return { outcome: 'enqueued', job: copy(job) };
        }
        case 'cancelled':
        case 'updated':
          put(outcome.job);
          return { ...outcome, job: copy(outcome.job) } as RefundOutcome;
        default:
          return { ...outcome, job: copy(outcome.job) } as RefundOutcome;
      }
    },

    async claim(options: ClaimOptions): Promise<Job[]> {
      assertOpen();
      const { now: at, limit, leaseMs, urgentWithinMs, excludeKeys } = checkClaim(options);
      const horizon = at + urgentWithinMs;
      const excluded = new Set(excludeKeys);
      const claimable = (job: Job) =>
        !excluded.has(accountKey(job.account)) &&
        isClaimable(job, at, job.kind === 'refund' ? confirmOf(job.account, job.orderId) : null);
      // Retaken and urgent jobs, whatever their account: one pass of cheap checks over the open jobs.
      const first: Job[] = [];
      if (leasesFrom <= at || deadlinesFrom <= horizon) {
        leasesFrom = Number.POSITIVE_INFINITY;
        deadlinesFrom = Number.POSITIVE_INFINITY;
        for (const id of live) {
          const job = jobs.get(id) as Job;
          if (job.state === 'inflight' && job.lease !== null)
            leasesFrom = Math.min(leasesFrom, job.lease.expiresAt);
          if (job.state === 'pending' && job.deadline !== null)
            deadlinesFrom = Math.min(deadlinesFrom, job.deadline);
          const soon =
            job.state === 'inflight'
              ? job.lease !== null && job.lease.expiresAt <= at
              : job.deadline !== null && job.deadline <= horizon && job.nextAttemptAt <= at;
          if (soon && claimable(job)) first.push(job);
        }
      }
      const due = first.sort(byClaimUrgency).slice(0, limit);
      if (due.length < limit) {
        // The rest in turns: at most `limit` due jobs of each account, in creation order (the scan of an
        // account stops there, however large its backlog).
        const queues: { key: string; jobs: Job[] }[] = [];
        for (const [key, ids] of liveByAccount) {
          if (excluded.has(key)) continue;
          const queue: Job[] = [];
          for (const id of ids) {
            const job = jobs.get(id) as Job;
            if (claimTier(job, at, horizon - at) === 2 && claimable(job)) queue.push(job);
            if (queue.length === limit) break;
          }
          queues.push({ key, jobs: queue });
        }
        const turns = takeInTurns(queues, limit - due.length, cursor);
        due.push(...turns.jobs);
        cursor = turns.last ?? cursor;
      }
      // No await between the scan and the writes: two concurrent claims cannot interleave here.
      return due.map((job) => {
        const claimed = claimJob(job, { now: at, leaseMs, token: newLeaseToken() });
        put(claimed);
        return copy(claimed);
      });
    },

    async complete(job, result) {
      assertOpen();
      const checked = checkComplete(job, result);
      return transition(checked.job, (stored) => completeJob(stored, checked.result), checked.attempt);
    },

    async retry(job, result) {
      assertOpen();
      const checked = checkRetry(job, result);
      return transition(checked.job, (stored) => retryJob(stored, checked.result), checked.attempt);
    },

    async fail(job, result) {
      assertOpen();
      const checked = checkFail(job, result);
      return transition(checked.job, (stored) => failJob(stored, checked.result), checked.attempt);
    },

    async release(claimed, now) {
      assertOpen();
      const { jobs: held, now: at } = checkRelease(claimed, now);
      for (const job of held) transition(job, (stored) => releaseJob(stored, at));
    },

    async extendLease(job, options) {
      assertOpen();
      const checked = checkExtendLease(job, options);
      return transition(checked.job, (stored) => extendJobLease(stored, checked));
    },

    async get(id) {
      assertOpen();
      const job = jobs.get(id);
      return job === undefined ? null : copy(job);
    },

    async getByOrder(orderId, account = null) {
      assertOpen();
      return [confirmOf(account, orderId), refundOf(account, orderId)]
        .filter((job): job is Job => job !== null)
        .map(copy);
    },

    async stats(now, options): Promise<OutboxStats> {
      assertOpen();
      const at = checkEpoch(now, 'now');
      const { atRiskWithinMs, deadlineBucketsMs } = resolveStatsOptions(options);
      let atRisk = 0;
      const buckets = deadlineBucketsMs.map(() => 0);
      const counts = Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as OutboxStats['counts'];
      let oldestPendingAt: EpochMs | null = null;
      let nearest: OutboxStats['nearestDeadline'] = null;
      for (const job of jobs.values()) {
        counts[job.state] += 1;
        if (job.state === 'pending' && (oldestPendingAt === null || job.createdAt < oldestPendingAt))
          oldestPendingAt = job.createdAt;
        if (!isOpenJob(job) || job.deadline === null) continue;
        if (nearest === null || job.deadline < nearest.deadline)
          nearest = { id: job.id, orderId: job.orderId, kind: job.kind, deadline: job.deadline };
        if (isAtRisk(job, at, atRiskWithinMs)) atRisk += 1;
        countDeadline(buckets, deadlineBucketsMs, at, job.deadline);
      }
      return {
        counts,
        oldestPendingAt,
        nearestDeadline: nearest,
        atRisk: { count: atRisk, withinMs: atRiskWithinMs },
        deadlineBuckets: deadlineBucketsMs.map((withinMs, i) => ({ withinMs, count: buckets[i] ?? 0 })),
      };
    },

    async listJobs(filter) {
      assertOpen();
      const resolved = resolveJobFilter(filter);
      return [...jobs.values()]
        .filter((job) => matchesJobFilter(job, resolved, lastStatus(job.id)))
        .sort(byUrgency)
        .slice(resolved.offset, resolved.offset + resolved.limit)
        .map(copy);
    },

    async history(id) {
      assertOpen();
      return (histories.get(id) ?? []).map((attempt) => ({ ...attempt }));
    },

    async listDead(options: ListDeadOptions = {}) {
      assertOpen();
      const { limit, after } = checkListDead(options);
      const dead = [...jobs.values()].filter((job) => job.state === 'dead');
      // Ids are zero-padded sequence numbers, so comparing them compares creation order, and a cursor
      // still works after its job was replayed or purged.
      const start = after === undefined ? dead : dead.filter((job) => job.id > after);
      return start.slice(0, limit).map(copy);
    },

    async replay(selection, now) {
      assertOpen();
      const { ids, now: at } = checkReplay(selection, now);
      const targets = ids === null ? [...jobs.values()] : ids.map((id) => jobs.get(id));
      let replayed = 0;
      for (const job of targets) {
        if (job === undefined || job.state !== 'dead') continue;
        const next = replayJob(job, { now: at, orderHasRefund: refundOf(job.account, job.orderId) !== null });
        put(next);
        if (next.state === 'pending') replayed += 1;
      }
      return replayed;
    },

    async purgeDead(options = {}) {
      assertOpen();
      const ids = checkPurge(options);
      const targets = ids === null ? [...jobs.values()] : ids.map((id) => jobs.get(id));
      let purged = 0;
      for (const job of targets) {
        if (job === undefined || job.state !== 'dead') continue;
        forget(job);
        purged += 1;
      }
      return purged;
    },

    async prune(options) {
      assertOpen();
      const { now: at, ...rules } = validatePruneOptions(options);
      let pruned = 0;
      for (const job of [...jobs.values()]) {
        const when = prunableAt(job, rules);
        if (when === null || when > at) continue;
        forget(job);
        pruned += 1;
      }
      return pruned;
    },

    async beat(beat) {
      assertOpen();
      const checked = checkBeat(beat);
      beats.set(checked.workerId, checked);
    },

    async workers(options) {
      assertOpen();
      const since = checkWorkersQuery(options);
      return [...beats.values()]
        .filter((beat) => beat.at >= since)
        .sort((a, b) => b.at - a.at)
        .map((beat) => ({ ...beat }));
    },

    async close() {
      closed = true;
    },
  };
  return outbox;
}

/**
 * An in-memory `Outbox`: the reference implementation of the contract (it passes `describeOutbox`), and
 * the store for tests, demos and edge functions that deliver within one process. Nothing survives a
 * restart: production uses SQLite, Postgres or SQS. Written to be read, not to hold a backlog: a claim
 * looks at every job it holds.
 */
import { z } from 'zod';
import { OutboxClosedError } from '../errors.ts';
import { parseOptions } from '../parse-options.ts';
import { type EpochMs, windowPolicySchema } from '../policy.ts';
import { accountKey, byClaimUrgency, claimTier, takeInTurns, takeQuietFirsts } from './accounts.ts';
import {
  checkBeat,
  checkClaim,
  checkComplete,
  checkEpoch,
  checkExtendLease,
  checkFail,
  checkListDead,
  checkOrderLookup,
  checkPurge,
  checkRelease,
  checkReleaseHeld,
  checkReplay,
  checkRetry,
  checkWorkersQuery,
} from './call-checks.ts';
import { type AttemptRecord, type ConfirmJob, JOB_STATES, type Job } from './job-types.ts';
import {
  claimJob,
  completeJob,
  extendJobLease,
  failJob,
  holdsLease,
  isClaimable,
  isReleasable,
  newConfirmJob,
  newLeaseToken,
  releaseHeldJob,
  releaseJob,
  replayJob,
  retryJob,
} from './jobs.ts';
import { checkLedgerInput, finalLedgerRow, matchesLedgerQuery, resolveLedgerQuery } from './ledger.ts';
import type { LedgerEntry, LedgerInput } from './ledger-types.ts';
import { createMemoryShadow } from './memory-shadow.ts';
import { createMemorySwitches } from './memory-switches.ts';
import {
  appendAttempt,
  byUrgency,
  matchesJobFilter,
  prunableAt,
  resolveJobFilter,
  resolveStatsOptions,
  statsOf,
  validatePruneOptions,
} from './operator-rules.ts';
import type { Outbox, OutboxFeatures, RefundOutcome, WorkerBeat } from './outbox-types.ts';
import { planRefund, refundAfterConfirm } from './refund-rules.ts';
import { validateRefundInput } from './validation.ts';
import { checkWithdraw, planWithdraw } from './withdraw-rules.ts';

/** Prefix of the ids the memory outbox assigns. @defaultValue "job_" */
export const DEFAULT_MEMORY_ID_PREFIX = 'job_';

const memoryOutboxOptionsSchema = z.strictObject({
  /** Windows used to stamp deadlines. @defaultValue core's `DEFAULT_*_WINDOW_MS` and safety margin */
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

function copy<J extends Job>(job: J): J {
  return { ...job, lease: job.lease === null ? null : { ...job.lease } };
}

/** An account's turns take its jobs in due order: next attempt, then id (creation order). */
function byDueOrder(a: Job, b: Job): number {
  return a.nextAttemptAt - b.nextAttemptAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

const FEATURES: OutboxFeatures = Object.freeze({
  attemptHistory: true,
  listableStates: JOB_STATES,
  heartbeats: true,
  prune: true,
  fairClaims: true,
  holds: true,
  ledger: true,
});

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
  const histories = new Map<string, AttemptRecord[]>();
  const beats = new Map<string, WorkerBeat>();
  let sequence = 0;
  let closed = false;
  /** The account served last by `claim`: the next claim's turns start after it. */
  let cursor: string | undefined;

  const nextId = () => `${idPrefix}${(++sequence).toString().padStart(12, '0')}`;
  // The id of each order's confirm and refund: an order is its account and its order id together. Neither
  // may hold a control character, so U+0001 cannot be ambiguous.
  const orders = new Map<string, string>();
  const orderKey = (kind: Job['kind'], account: string | null, orderId: string) =>
    `${kind}\u0001${accountKey(account)}\u0001${orderId}`;
  const jobOf = <K extends Job['kind']>(kind: K, account: string | null, orderId: string) =>
    (jobs.get(orders.get(orderKey(kind, account, orderId)) ?? '') ?? null) as Extract<
      Job,
      { kind: K }
    > | null;
  const insert = (job: Job) => {
    jobs.set(job.id, job);
    orders.set(orderKey(job.kind, job.account, job.orderId), job.id);
  };
  const forget = (job: Job) => {
    jobs.delete(job.id);
    histories.delete(job.id);
    orders.delete(orderKey(job.kind, job.account, job.orderId));
  };
  const assertOpen = () => {
    if (closed) throw new OutboxClosedError('the memory outbox');
  };

  /** Keeps the "refund follows its confirm" rule after a confirm changes state. */
  const followConfirm = (job: Job) => {
    const refund = job.kind === 'confirm' ? jobOf('refund', job.account, job.orderId) : null;
    if (refund === null) return;
    const next = refundAfterConfirm(refund, job as ConfirmJob, policy);
    if (next !== refund) jobs.set(next.id, next);
  };

  const ledger: LedgerEntry[] = [];
  const addLedger = (row: LedgerInput | null): LedgerEntry | null => {
    if (row === null) return null;
    const entry = { ...row, seq: ledger.length === 0 ? 1 : (ledger.at(-1) as LedgerEntry).seq + 1 };
    ledger.push(entry);
    return entry;
  };

  /** Applies a transition to the stored job only when `claimed` still holds its lease; keeps its attempt. */
  const transition = (claimed: Job, apply: (stored: Job) => Job, attempt: AttemptRecord | null = null) => {
    const stored = jobs.get(claimed.id);
    if (stored === undefined || !holdsLease(stored, claimed)) return false;
    const next = apply(stored);
    jobs.set(next.id, next);
    addLedger(finalLedgerRow(stored, next, next.updatedAt));
    if (attempt !== null) histories.set(next.id, appendAttempt(histories.get(next.id) ?? [], attempt));
    followConfirm(next);
    return true;
  };
  const lastStatus = (id: string): number | null => histories.get(id)?.at(-1)?.status ?? null;
  const shadow = createMemoryShadow({
    assertOpen,
    jobs: () => jobs.values(),
    transition: (claimed, apply) => transition(claimed, apply),
    update: (job) => {
      jobs.set(job.id, job);
      followConfirm(job);
    },
    hasRefund: (job) => jobOf('refund', job.account, job.orderId) !== null,
  });

  const switches = createMemorySwitches({
    assertOpen,
    jobs: () => jobs.values(),
    update: (before, after) => {
      jobs.set(after.id, after);
      addLedger(finalLedgerRow(before, after, after.updatedAt));
      followConfirm(after);
    },
  });

  return {
    features: FEATURES,
    shadow,
    switches,

    async confirm(input) {
      assertOpen();
      // Validated even when the order exists, so a malformed retry of a good request is still reported.
      const job = newConfirmJob(input, { now: now(), id: `${idPrefix}new`, policy });
      const existing = jobOf('confirm', job.account, job.orderId);
      if (existing !== null) return { created: false, job: copy(existing) };
      const created = { ...job, id: nextId() };
      insert(created);
      return { created: true, job: copy(created) };
    },

    async refund(input) {
      assertOpen();
      const { orderId, account = null } = validateRefundInput(input);
      const outcome = planRefund(input, {
        now: now(),
        id: `${idPrefix}new`,
        policy,
        confirm: jobOf('confirm', account, orderId),
        refund: jobOf('refund', account, orderId),
      });
      if (outcome.outcome === 'enqueued') {
        const job = { ...outcome.job, id: nextId() };
        insert(job);
        return { outcome: 'enqueued', job: copy(job) };
      }
      if (outcome.outcome === 'cancelled' || outcome.outcome === 'updated')
        jobs.set(outcome.job.id, outcome.job);
      return { ...outcome, job: copy(outcome.job) } as RefundOutcome;
    },

    async withdraw(input) {
      assertOpen();
      const { orderId, account } = checkWithdraw(input);
      const outcome = planWithdraw(jobOf('confirm', account, orderId), now());
      if (outcome.outcome === 'cancelled') {
        jobs.set(outcome.job.id, outcome.job);
        followConfirm(outcome.job);
      }
      return outcome.job === null ? outcome : { ...outcome, job: copy(outcome.job) };
    },

    async claim(options) {
      assertOpen();
      const { now: at, limit, leaseMs, urgentWithinMs, excludeKeys } = checkClaim(options);
      const excluded = new Set(excludeKeys);
      // One pass over every job: retaken and urgent ones apart, the rest by account for the turns.
      const first: Job[] = [];
      const byAccount = new Map<string, Job[]>();
      const pending = new Map<string, number>();
      for (const job of jobs.values()) {
        const key = accountKey(job.account);
        if (job.state === 'pending' && job.deadline !== null) pending.set(key, (pending.get(key) ?? 0) + 1);
        const confirm = job.kind === 'refund' ? jobOf('confirm', job.account, job.orderId) : null;
        if (excluded.has(key) || !isClaimable(job, at, confirm)) continue;
        if (claimTier(job, at, urgentWithinMs) < 2) first.push(job);
        else if (byAccount.get(key)?.push(job) === undefined) byAccount.set(key, [job]);
      }
      const due = first.sort(byClaimUrgency).slice(0, limit);
      if (due.length < limit) {
        const queues = [...byAccount].map(([key, queue]) => ({ key, jobs: queue.sort(byDueOrder) }));
        const quiet = takeQuietFirsts(queues, limit - due.length, at, (key) => pending.get(key) ?? 0);
        due.push(...quiet.jobs);
        const turns = takeInTurns(quiet.rest, limit - due.length, cursor);
        due.push(...turns.jobs);
        cursor = turns.last ?? cursor;
      }
      // No await between the scan and the writes: two concurrent claims cannot interleave here.
      return due.map((job) => {
        const claimed = claimJob(job, { now: at, leaseMs, token: newLeaseToken() });
        jobs.set(claimed.id, claimed);
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

    async releaseHeld(options) {
      assertOpen();
      const { now: at, ...which } = checkReleaseHeld(options);
      let released = 0;
      for (const job of jobs.values()) {
        if (!isReleasable(job, which)) continue;
        jobs.set(job.id, releaseHeldJob(job, at));
        released += 1;
      }
      return released;
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

    async getByOrder(given, account = null) {
      assertOpen();
      const order = checkOrderLookup(given, account);
      return [jobOf('confirm', order.account, order.orderId), jobOf('refund', order.account, order.orderId)]
        .filter((job): job is Job => job !== null)
        .map(copy);
    },

    async stats(now, options) {
      assertOpen();
      return statsOf(jobs.values(), checkEpoch(now, 'now'), resolveStatsOptions(options));
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

    async listDead(options) {
      assertOpen();
      const { limit, after } = checkListDead(options);
      // Ids are zero-padded sequence numbers, so comparing them compares creation order, and a cursor
      // still works after its job was replayed or purged.
      return [...jobs.values()]
        .filter((job) => job.state === 'dead' && (after === undefined || job.id > after))
        .slice(0, limit)
        .map(copy);
    },

    async replay(selection, now) {
      assertOpen();
      const { ids, now: at } = checkReplay(selection, now);
      let replayed = 0;
      for (const id of ids === null ? [...jobs.keys()] : new Set(ids)) {
        const job = jobs.get(id);
        if (job?.state !== 'dead') continue;
        const orderHasRefund = jobOf('refund', job.account, job.orderId) !== null;
        const next = replayJob(job, { now: at, orderHasRefund });
        jobs.set(next.id, next);
        addLedger(finalLedgerRow(job, next, at));
        if (next.state === 'pending') replayed += 1;
      }
      return replayed;
    },

    async purgeDead(options) {
      assertOpen();
      const ids = checkPurge(options);
      let purged = 0;
      for (const id of ids === null ? [...jobs.keys()] : new Set(ids)) {
        const job = jobs.get(id);
        if (job?.state !== 'dead') continue;
        forget(job);
        purged += 1;
      }
      return purged;
    },

    async prune(options) {
      assertOpen();
      const { now: at, ledgerRetentionMs, ...rules } = validatePruneOptions(options);
      const kept = ledger.filter((row) => row.at >= at - ledgerRetentionMs);
      ledger.splice(0, ledger.length, ...kept);
      let pruned = 0;
      for (const job of [...jobs.values()]) {
        const when = prunableAt(job, rules);
        if (when === null || when > at) continue;
        forget(job);
        pruned += 1;
      }
      return pruned;
    },

    async appendLedger(entry) {
      assertOpen();
      return { ...(addLedger(checkLedgerInput(entry)) as LedgerEntry) };
    },

    async readLedger(query) {
      assertOpen();
      const resolved = resolveLedgerQuery(query);
      return ledger
        .filter((row) => matchesLedgerQuery(row, resolved))
        .slice(0, resolved.limit)
        .map((row) => ({ ...row }));
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
}

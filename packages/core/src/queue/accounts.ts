/**
 * Many advertisers in one outbox. A job may carry an `account`: an opaque reference chosen by the app
 * (a shop id, a tenant), never a key. An order is identified by its account and its order id together, so
 * two shops may both have an order "1001". Jobs without an account (`null`) are the single-account case
 * and behave exactly as before accounts existed.
 *
 * This module holds the rules every store shares: what an account may be, how a store keeps it (SQL
 * columns cannot hold `null` in a unique key, so `null` is stored as the empty string, which no account
 * may be), and the order in which `claim` takes due jobs so that one account's backlog never delays
 * another account's fresh job by more than a claim:
 *
 * 1. jobs whose lease ran out (retaken: they may have been applied, and they hold back their refund),
 *    by lease expiry;
 * 2. jobs whose deadline is within `urgentWithinMs`, nearest deadline first, whatever their account;
 * 3. quiet accounts' first jobs: an account that holds at most {@link QUIET_MAX_PENDING} pending jobs and
 *    whose first due job (in its due order: `nextAttemptAt`, then id) was created less than
 *    {@link QUIET_WITHIN_MS} ago and never attempted has little work waiting, so that first job goes before
 *    the turns, oldest first — one job an account a claim. A shop that sends a few orders among thousands
 *    of accounts with backlogs is served by the next claim, not at its turn (as SQS fair queues favour
 *    message groups with little in flight). An account with more pending jobs (a backlog, a burst), or
 *    whose first job has waited longer, takes its turn. Stores look for them among at most
 *    {@link QUIET_SCAN} of the newest pending jobs, so this costs a claim a bounded read;
 * 4. the rest in turns across accounts: one job of each account that has due jobs, then a second of each,
 *    and so on, each account's jobs in the store's due order (`nextAttemptAt`, then id). Turns start at the
 *    account after the last one served by the previous claim (a cursor the outbox keeps in memory), so
 *    with more accounts than a claim takes, every account is reached within a few claims.
 */
import type { EpochMs } from '../policy.ts';
import type { Job } from './job-types.ts';

/**
 * Due jobs whose deadline is this close are claimed before any other (nearest deadline first, whatever
 * their account); the rest are claimed in turns across accounts. @defaultValue 1 hour
 */
export const DEFAULT_URGENT_WITHIN_MS = 3_600_000;

/**
 * An account is quiet while its first due job, never attempted, is younger than this: that job is claimed
 * before the turns across accounts (see the module header). @defaultValue 10 seconds
 */
export const QUIET_WITHIN_MS = 10_000;

/**
 * An account holding more pending jobs than this is not quiet: it takes its turns across accounts like
 * any backlog (see the module header). @defaultValue 4
 */
export const QUIET_MAX_PENDING = 4;

/**
 * The young pending jobs (created within {@link QUIET_WITHIN_MS}) a store reads at most per claim, the
 * newest first, to find quiet accounts' first jobs: a bound on what the quiet tier costs a claim when many
 * young jobs belong to accounts with a backlog. @defaultValue 32
 */
export const QUIET_SCAN = 32;

/**
 * How a store keeps an account: the account itself, or `""` for none (never a valid account), so that
 * `(account, order_id, kind)` can be a unique key and `NOT IN` lists work in SQL.
 *
 * @example
 * ```ts
 * accountKey(null); // ""
 * accountKey('shop-17'); // "shop-17"
 * ```
 */
export function accountKey(account: string | null): string {
  return account ?? '';
}

/**
 * The account a stored key stands for (the inverse of {@link accountKey}).
 *
 * @example
 * ```ts
 * accountFromKey(''); // null
 * ```
 */
export function accountFromKey(key: string | null | undefined): string | null {
  return key === '' || key === null || key === undefined ? null : key;
}

/**
 * Human name of an account for messages and logs: the account, or "(no account)".
 *
 * @example
 * ```ts
 * describeAccount(null); // "(no account)"
 * ```
 */
export function describeAccount(account: string | null): string {
  return account === null ? '(no account)' : account;
}

/**
 * The claim tier of a claimable job (see the module header): 0 retaken after its lease ran out, 1 urgent
 * (deadline within `urgentWithinMs`), 2 taken in turns across accounts.
 *
 * @example
 * ```ts
 * claimTier(job, now, DEFAULT_URGENT_WITHIN_MS); // 2 for a fresh confirmation
 * ```
 */
export function claimTier(job: Job, now: EpochMs, urgentWithinMs: number): 0 | 1 | 2 {
  if (job.state === 'inflight') return 0;
  if (job.deadline !== null && job.deadline <= now + urgentWithinMs) return 1;
  return 2;
}

/**
 * The quiet accounts' first jobs (see the module header), oldest first (creation time, then id), at most
 * `limit`, each removed from its queue so that the turns that follow do not take it again. `queues` are
 * the accounts' claimable jobs in their due order (the first of each is the account's first due job);
 * `pendingOf` gives how many pending jobs an account holds in all (due or not).
 *
 * @example
 * ```ts
 * const quiet = takeQuietFirsts(queues, 16, Date.now(), (key) => pending.get(key) ?? 0);
 * const turns = takeInTurns(quiet.rest, 16 - quiet.jobs.length, cursor);
 * ```
 */
export function takeQuietFirsts<J extends Pick<Job, 'id' | 'createdAt' | 'attempts'>>(
  queues: readonly AccountQueue<J>[],
  limit: number,
  now: EpochMs,
  pendingOf: (key: string) => number,
): { jobs: J[]; rest: AccountQueue<J>[] } {
  const firsts = queues
    .filter((queue) => pendingOf(queue.key) <= QUIET_MAX_PENDING)
    .map((queue) => queue.jobs[0])
    .filter(
      (job): job is J => job !== undefined && job.attempts === 0 && job.createdAt > now - QUIET_WITHIN_MS,
    )
    .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, limit);
  const taken = new Set<J>(firsts);
  const rest = queues.map((queue) =>
    taken.has(queue.jobs[0] as J) ? { key: queue.key, jobs: queue.jobs.slice(1) } : queue,
  );
  return { jobs: firsts, rest };
}

/** One account's due jobs in its due order, for {@link takeInTurns}. */
export interface AccountQueue<J> {
  /** The account's {@link accountKey}. */
  key: string;
  jobs: readonly J[];
}

/**
 * Takes up to `limit` jobs in turns across accounts: the first job of each account, then the second of
 * each, and so on. Turns start at the first account whose key sorts after `after` (wrapping around);
 * `last` is the key of the account served last, the `after` of the next claim.
 *
 * @example
 * ```ts
 * const { jobs, last } = takeInTurns(queues, 16, cursor);
 * cursor = last ?? cursor;
 * ```
 */
export function takeInTurns<J>(
  queues: readonly AccountQueue<J>[],
  limit: number,
  after: string | undefined,
): { jobs: J[]; last: string | undefined } {
  const sorted = [...queues]
    .filter((q) => q.jobs.length > 0)
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const start = after === undefined ? 0 : sorted.findIndex((q) => q.key > after);
  const rotated = start <= 0 ? sorted : [...sorted.slice(start), ...sorted.slice(0, start)];
  const jobs: J[] = [];
  let last: string | undefined;
  for (let turn = 0; jobs.length < limit; turn++) {
    let took = false;
    for (const queue of rotated) {
      const job = queue.jobs[turn];
      if (job === undefined) continue;
      jobs.push(job);
      last = queue.key;
      took = true;
      if (jobs.length === limit) break;
    }
    if (!took) break;
  }
  return { jobs, last };
}

/** The order of tiers 0 and 1: retaken jobs by lease expiry, then urgent jobs by deadline, then id. */
export function byClaimUrgency(a: Job, b: Job): number {
  const ka = a.state === 'inflight' ? (a.lease?.expiresAt ?? 0) : (a.deadline ?? Number.POSITIVE_INFINITY);
  const kb = b.state === 'inflight' ? (b.lease?.expiresAt ?? 0) : (b.deadline ?? Number.POSITIVE_INFINITY);
  const ta = a.state === 'inflight' ? 0 : 1;
  const tb = b.state === 'inflight' ? 0 : 1;
  if (ta !== tb) return ta - tb;
  if (ka !== kb) return ka < kb ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

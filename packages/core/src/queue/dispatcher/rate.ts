/**
 * The rate of requests: a 429 slows the sender, not one job. Each send waits for its turn here before
 * its request goes, under two kinds of limits, each a token bucket of one token (sends spaced evenly, so
 * no second holds more than the rate):
 *
 * - known limits, `maxRequestsPerSecond` (`total`: all sends of the Dispatcher; `perAccount`: each
 *   `job.account`'s sends, `null` being one account): for a service whose limit is known, kept below;
 * - a learned one, per scope of a 429 (the job's account with `apiKeyFor`, else all sends): after a 429 the
 *   scope's sends are spaced at 90 % of the answers other than 429 it got in the second before (what the
 *   service let through: the requests sent count the refused ones too), at least 1 a second; the rate
 *   grows by 5 % after each second it was used (half of it answered) without a 429, so it never climbs
 *   more than that step above a rate that drew no 429, and a limit raised later is found again. The 429s
 *   of one burst (the sends already in flight) lower it once.
 *
 * The wait the 429 asked for (`Retry-After`) is the pause table's (`pauses.ts`, cause `rate-limited`):
 * nothing of the scope is sent until it ends, then one probe at a time. Together they keep 429s to a few
 * per limit found, instead of `concurrency` per second.
 */
import { accountKey } from '../accounts.ts';
import { sleep } from './wake.ts';

/** Known request limits; see the module header. */
export interface MaxRequestsPerSecond {
  /** All sends of the Dispatcher. */
  total?: number | undefined;
  /** The sends of each account (`job.account`). */
  perAccount?: number | undefined;
}

/**
 * How long a 429 without `Retry-After` pauses its scope (ms); a `Retry-After` sets it (at least the
 * backoff's `minMs`).
 */
export const DEFAULT_RATE_LIMIT_PAUSE_MS = 1_000;
/**
 * The longest a 429 pauses its scope before one job probes (ms), whatever its `Retry-After` asked: a year's
 * `Retry-After` (a proxy's bug, a misread header) costs one refused request an hour, not a year of orders.
 * @defaultValue 3_600_000 (1 hour)
 */
export const MAX_RATE_LIMIT_PAUSE_MS = 3_600_000;
/** Growth of a learned rate per second it was used without a 429 (a share of it, no minimum). */
export const LEARNED_RATE_GROWTH = 0.05;
/** The share of a learned rate a second's answers must reach for that second to let the rate grow. */
export const LEARNED_RATE_USED = 0.5;
/** The share of the answers let through in the second before a 429 that the scope then keeps to. */
export const LEARNED_RATE_SHARE = 0.9;

/** What the rate needs. */
export interface RateContext {
  max: MaxRequestsPerSecond | undefined;
  /** Whether a 429 limits the job's account only (`apiKeyFor`: a key per account) or all sends. */
  perAccountKeys: boolean;
  /** A monotonic clock (ms). @defaultValue `performance.now` */
  clock?: () => number;
  /** Waits `ms`. @defaultValue a timer */
  wait?: (ms: number) => Promise<void>;
}

/** The turns of sends; see the module header. */
export interface RequestRate {
  /** Waits for the turn of a send of `account`'s job; undefined when it is now (no wait, no promise). */
  take(account: string | null): Promise<void> | undefined;
  /**
   * A send of `account`'s job was answered with `status` (null: no answer, which counts for nothing): a
   * 429 makes its scope keep to a learned rate from now; any other answer counts as let through.
   */
  answered(account: string | null, status: number | null): void;
  /** The learned rate of `account`'s scope (requests a second), or null while no 429 came. */
  learned(account: string | null): number | null;
}

/** One bucket of one token: the time of the next turn, `intervalMs` apart. */
interface Bucket {
  intervalMs: number;
  next: number;
}

/** A scope's answers let through in the last second (in tenths of it), and the rate learned from its 429s. */
interface Scope {
  /** Answers let through per tenth of a second, a ring indexed by the tenth's number modulo 10. */
  passed: number[];
  /** The number of the tenth `passed` was last written in. */
  tenth: number;
  rate: number | null;
  grownAt: number;
  limitedAt: number;
  bucket: Bucket;
}

const ALL = Symbol('all sends');
const SECOND = 1_000;
const TENTH = SECOND / 10;

/**
 * Creates the turns of one Dispatcher's sends.
 *
 * @example
 * ```ts
 * const rate = createRequestRate({ max: { total: 50 }, perAccountKeys: false });
 * await rate.take(job.account); // then send
 * ```
 */
export function createRequestRate(ctx: RateContext): RequestRate {
  const clock = ctx.clock ?? (() => performance.now());
  const wait = ctx.wait ?? ((ms: number) => sleep(ms));
  const total = ctx.max?.total;
  const perAccount = ctx.max?.perAccount;
  const totalBucket: Bucket | null = total === undefined ? null : { intervalMs: SECOND / total, next: 0 };
  const accountBuckets = new Map<string, Bucket>();
  const scopes = new Map<string | symbol, Scope>();
  const scopeKey = (account: string | null) => (ctx.perAccountKeys ? accountKey(account) : ALL);

  const scopeOf = (account: string | null): Scope => {
    const key = scopeKey(account);
    let scope = scopes.get(key);
    if (scope === undefined) {
      scope = {
        passed: new Array<number>(10).fill(0),
        tenth: 0,
        rate: null,
        grownAt: 0,
        limitedAt: Number.NEGATIVE_INFINITY,
        bucket: { intervalMs: 0, next: 0 },
      };
      scopes.set(key, scope);
    }
    return scope;
  };

  /** The buckets a send of `account` goes through. */
  const bucketsOf = (account: string | null, scope: Scope): Bucket[] => {
    const out: Bucket[] = [];
    if (totalBucket !== null) out.push(totalBucket);
    if (perAccount !== undefined) {
      const key = accountKey(account);
      let bucket = accountBuckets.get(key);
      if (bucket === undefined) {
        bucket = { intervalMs: SECOND / perAccount, next: 0 };
        accountBuckets.set(key, bucket);
      }
      out.push(bucket);
    }
    if (scope.rate !== null) out.push(scope.bucket);
    return out;
  };

  /** Empties the tenths of `scope`'s last second that lie before `at`'s second; returns the answers kept. */
  const recentPassed = (scope: Scope, at: number): number => {
    const { passed } = scope;
    const tenth = Math.floor(at / TENTH);
    for (let t = Math.max(scope.tenth + 1, tenth - 9); t <= tenth; t++) passed[t % 10] = 0;
    scope.tenth = Math.max(scope.tenth, tenth);
    return passed.reduce((sum, n) => sum + n, 0);
  };

  /**
   * The learned rate grows by {@link LEARNED_RATE_GROWTH} after a second in which the scope used it (its
   * answers other than 429 reached {@link LEARNED_RATE_USED} of it) with no 429: never more than that step
   * above the last rate that drew no 429, and not at all while idle (an unused rate proves nothing).
   */
  const grow = (scope: Scope, at: number) => {
    if (scope.rate === null || at - scope.grownAt < SECOND) return;
    if (recentPassed(scope, at) >= scope.rate * LEARNED_RATE_USED) {
      scope.rate *= 1 + LEARNED_RATE_GROWTH;
      scope.bucket.intervalMs = SECOND / scope.rate;
    }
    scope.grownAt = at;
  };

  return {
    take(account) {
      const scope = scopeOf(account);
      const at = clock();
      grow(scope, at);
      const buckets = bucketsOf(account, scope);
      if (buckets.length === 0) return undefined;
      // The turn is the latest of the buckets' next turns; each bucket's next one is an interval after.
      const turn = Math.max(at, ...buckets.map((b) => b.next));
      for (const bucket of buckets) bucket.next = turn + bucket.intervalMs;
      return turn > at ? wait(turn - at) : undefined;
    },

    answered(account, status) {
      const scope = scopeOf(account);
      const at = clock();
      // Only the scope's last second is kept (the tenths since the last answer are emptied first).
      const recent = recentPassed(scope, at);
      if (status === null) return;
      if (status !== 429) {
        const tenth = Math.floor(at / TENTH) % 10;
        scope.passed[tenth] = (scope.passed[tenth] as number) + 1;
        return;
      }
      // The other 429s of the same burst (sent before the first came back) teach nothing more.
      if (at - scope.limitedAt < SECOND) return;
      scope.limitedAt = at;
      const rate = Math.max(1, Math.floor(recent * LEARNED_RATE_SHARE));
      // A 429 while already keeping to a rate: that rate was too much.
      scope.rate = scope.rate === null ? rate : Math.max(1, Math.min(rate, scope.rate * LEARNED_RATE_SHARE));
      scope.grownAt = at;
      scope.bucket.intervalMs = SECOND / scope.rate;
    },

    learned: (account) => scopes.get(scopeKey(account))?.rate ?? null,
  };
}

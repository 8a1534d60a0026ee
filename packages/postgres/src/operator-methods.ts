/**
 * What operators call on the Postgres outbox (`postback status`, `jobs`, `dlq list`, `dlq replay`):
 * reading jobs, counts and deadlines at risk, listing jobs by filter and the dead-letter jobs a page at a
 * time, each job's attempt history, replaying or purging dead jobs, pruning old final ones, and worker
 * heart-beats. Core's rules (`matchesJobFilter`, `byUrgency`, `isAtRisk`, `prunableAt`) are stated in SQL
 * (see `statements.ts`); the conformance suite holds them to the memory outbox's answers.
 */
import {
  type AttemptRecord,
  type EpochMs,
  JOB_STATES,
  type Job,
  type JobFilter,
  type ListDeadOptions,
  type OutboxFeatures,
  type OutboxStats,
  type PruneOptions,
  type StatsOptions,
  type WorkerBeat,
} from '@postback/core';
import {
  accountFromKey,
  accountKey,
  byHeldSince,
  checkBeat,
  checkEpoch,
  checkListDead,
  checkOrderLookup,
  checkPurge,
  checkReplay,
  checkWorkersQuery,
  type ResolvedJobFilter,
  resolveJobFilter,
  resolveStatsOptions,
  validatePruneOptions,
} from '@postback/core/store';
import { beatValues, rowToBeat } from './beat-rows.ts';
import { assertOpen, inTransaction, type PostgresOutboxContext } from './outbox-context.ts';
import type { Queryable } from './queryable.ts';
import { rowToJob, toBigintText } from './rows.ts';
import { quoteIdent } from './schema-name.ts';
import type { JobListShape } from './statements.ts';

/** What the Postgres outbox keeps for operators: everything. */
export const POSTGRES_OUTBOX_FEATURES: OutboxFeatures = Object.freeze({
  attemptHistory: true,
  listableStates: JOB_STATES,
  heartbeats: true,
  prune: true,
  fairClaims: true,
  holds: true,
  ledger: true,
});

/** Rows one read of a `reason` listing fetches (the RegExp is tested in JavaScript, so pages are refilled). */
const REASON_CHUNK = 500;

type Row = Record<string, unknown>;

/**
 * The outbox's `get`, `getByOrder`, `stats`, `listJobs`, `history`, `listDead`, `replay`, `purgeDead`,
 * `prune`, `beat` and `workers` methods, and its `features`.
 *
 * @example
 * ```ts
 * const { listDead, replay } = operatorMethods(context);
 * const dead = await listDead({ limit: 50 });
 * await replay({ ids: dead.map((job) => job.id) }, Date.now());
 * ```
 */
export function operatorMethods(context: PostgresOutboxContext) {
  const { pool, sql: SQL, q, channel } = context;
  return {
    async get(id: string): Promise<Job | null> {
      assertOpen(context);
      const dbId = toBigintText(id);
      if (dbId === null) return null;
      const row = (await q(pool, SQL.get, [dbId])).rows[0];
      return row === undefined ? null : rowToJob(row);
    },

    async getByOrder(orderId: string, account: string | null = null): Promise<Job[]> {
      assertOpen(context);
      const order = checkOrderLookup(orderId, account);
      return (await q(pool, SQL.getByOrder, [order.orderId, accountKey(order.account)])).rows.map(rowToJob);
    },

    async stats(now: EpochMs, options?: StatsOptions): Promise<OutboxStats> {
      assertOpen(context);
      const at = checkEpoch(now, 'now');
      const { atRiskWithinMs, deadlineBucketsMs } = resolveStatsOptions(options);
      // Bounds as width_bucket thresholds: `deadline <= now + withinMs` is `deadline < now + withinMs + 1`.
      const within = [...new Set([atRiskWithinMs, ...deadlineBucketsMs])].sort((a, b) => a - b);
      const thresholds = within.map((ms) => at + ms + 1);
      const [counts, oldest, nearest, risk, held] = await Promise.all([
        q(pool, SQL.counts),
        q(pool, SQL.oldestPending),
        q(pool, SQL.nearestDeadline),
        q(pool, SQL.deadlineRisk, [thresholds.map(String), String(at + (within.at(-1) ?? 0))]),
        q(pool, SQL.heldProblems),
      ]);
      // A job in width bucket b (b thresholds at or before its deadline) counts in bounds b, b+1, ...
      const cumulative = within.map(() => 0);
      for (const row of risk.rows) {
        for (let i = Number(row.bucket); i < cumulative.length; i += 1)
          cumulative[i] = (cumulative[i] ?? 0) + Number(row.n);
      }
      const countWithin = (ms: number) => cumulative[within.indexOf(ms)] ?? 0;
      const byState = Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as OutboxStats['counts'];
      for (const row of counts.rows) byState[row.state as keyof typeof byState] = Number(row.n);
      const oldestAt = oldest.rows[0]?.at;
      const near = nearest.rows[0];
      return {
        counts: byState,
        oldestPendingAt: oldestAt === null || oldestAt === undefined ? null : Number(oldestAt),
        nearestDeadline:
          near === undefined
            ? null
            : {
                id: String(near.id),
                orderId: String(near.order_id),
                kind: near.kind as Job['kind'],
                deadline: Number(near.deadline),
              },
        atRisk: { count: countWithin(atRiskWithinMs), withinMs: atRiskWithinMs },
        deadlineBuckets: deadlineBucketsMs.map((withinMs) => ({ withinMs, count: countWithin(withinMs) })),
        held: held.rows
          .map((row) => ({
            account: accountFromKey(row.account as string),
            campaignId: (row.held_campaign_id as string | null) ?? null,
            count: Number(row.n),
            valueMicros: Number(row.value),
            reason: (row.reason as string | null) ?? '',
            since: Number(row.since),
            earliestDeadline: row.earliest_deadline == null ? null : Number(row.earliest_deadline),
          }))
          .sort(byHeldSince),
      };
    },

    async listJobs(filter?: JobFilter): Promise<Job[]> {
      assertOpen(context);
      const resolved = resolveJobFilter(filter);
      const [text, values] = listQuery(resolved);
      const reason = resolved.reason;
      if (reason === null)
        return (await q(pool, text, [...values, resolved.limit, resolved.offset])).rows.map(rowToJob);
      // The RegExp is JavaScript's: read the SQL-filtered rows in order, a chunk at a time in one snapshot,
      // counting the offset and the limit among those it matches, and stop at the page's last job.
      return inTransaction(
        pool,
        async (db: Queryable) => {
          const page: Job[] = [];
          let skip = resolved.offset;
          for (let read = 0; ; read += REASON_CHUNK) {
            const { rows } = await q(db, text, [...values, REASON_CHUNK, read]);
            for (const row of rows) {
              if (!reason.test(String(row.last_error))) continue;
              if (skip > 0) skip -= 1;
              else if (page.push(rowToJob(row)) === resolved.limit) return page;
            }
            if (rows.length < REASON_CHUNK) return page;
          }
        },
        'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
      );
    },

    async history(id: string): Promise<AttemptRecord[]> {
      assertOpen(context);
      const dbId = toBigintText(id);
      if (dbId === null) return [];
      const stored = (await q(pool, SQL.history, [dbId])).rows[0]?.history;
      if (stored === null || stored === undefined) return [];
      // pg parses jsonb; other drivers behind a Queryable may hand back its text.
      return (typeof stored === 'string' ? JSON.parse(stored) : stored) as AttemptRecord[];
    },

    async listDead(options: ListDeadOptions = {}): Promise<Job[]> {
      assertOpen(context);
      const checked = checkListDead(options);
      const after = checked.after === undefined ? '0' : toBigintText(checked.after);
      if (after === null)
        throw new RangeError(
          `after must be the id of a job of this outbox, got ${JSON.stringify(checked.after)}`,
        );
      return (await q(pool, SQL.listDead, [after, checked.limit])).rows.map(rowToJob);
    },

    async replay(selection: { ids: readonly string[] } | { all: true }, now: EpochMs): Promise<number> {
      assertOpen(context);
      const checked = checkReplay(selection, now);
      const at = checked.now;
      const ids = checked.ids === null ? null : idList(checked.ids);
      if (ids !== null && ids.length === 0) return 0;
      const result = await q(pool, SQL.replay, [at, ids, channel]);
      return result.rows.filter((row: Row) => row.next_state === 'pending').length;
    },

    async purgeDead(options: { ids?: readonly string[] } = {}): Promise<number> {
      assertOpen(context);
      const given = checkPurge(options);
      const ids = given === null ? null : idList(given);
      if (ids !== null && ids.length === 0) return 0;
      return (await q(pool, SQL.purgeDead, [ids])).rowCount ?? 0;
    },

    async prune(options: PruneOptions): Promise<number> {
      assertOpen(context);
      const { now: at, olderThanMs, returnWindowMs, ledgerRetentionMs } = validatePruneOptions(options);
      const rule = [at, at - olderThanMs, returnWindowMs];
      // Bounded batches, each its own statement and transaction: claims and enqueues run between them.
      let pruned = 0;
      for (let after: string | null = '0'; after !== null; ) {
        assertOpen(context);
        const row = (await q(pool, SQL.prune, [...rule, after])).rows[0] as Row;
        pruned += Number(row.deleted);
        after = row.next === null || row.next === undefined ? null : String(BigInt(String(row.next)) - 1n);
      }
      await q(pool, SQL.forgetWorkers, [at - olderThanMs]);
      // The ledger has its own retention: no row younger than it goes, whatever `olderThanMs` says.
      await q(pool, `DELETE FROM ${quoteIdent(context.schema)}.ledger WHERE at < $1`, [
        at - ledgerRetentionMs,
      ]);
      return pruned;
    },

    async beat(beat: WorkerBeat): Promise<void> {
      assertOpen(context);
      await q(pool, SQL.beat, beatValues(checkBeat(beat)));
    },

    async workers(options: { now: EpochMs; sinceMs: number }): Promise<WorkerBeat[]> {
      assertOpen(context);
      return (await q(pool, SQL.workers, [checkWorkersQuery(options)])).rows.map(rowToBeat);
    },

    features: POSTGRES_OUTBOX_FEATURES,
  };

  /** The statement of a filter's shape and its values (LIMIT and OFFSET left to the caller). */
  function listQuery(filter: ResolvedJobFilter): [string, unknown[]] {
    const shape: JobListShape = {
      states: filter.states?.length ?? 0,
      kind: filter.kind !== null,
      orderId: filter.orderId !== null,
      account: filter.accountKey !== null,
      reason: filter.reason !== null,
      status: filter.status !== null,
      deadlineBefore: filter.deadlineBefore !== null,
      updatedBefore: filter.updatedBefore !== null,
    };
    const values: unknown[] = [...(filter.states ?? [])];
    for (const value of [
      filter.kind,
      filter.orderId,
      filter.accountKey,
      filter.status,
      filter.deadlineBefore,
      filter.updatedBefore,
    ])
      if (value !== null) values.push(value);
    return [SQL.listJobs(shape), values];
  }
}

/** The ids that can name a job of this outbox (others match no row, so they are dropped). */
function idList(ids: readonly string[]): string[] {
  return ids.map(toBigintText).filter((id): id is string => id !== null);
}

/**
 * What operators call on the Postgres outbox (`postback status`, `dlq list`, `dlq replay`): reading jobs
 * and counts, listing the dead-letter jobs a page at a time, and replaying or purging a selection of them.
 */
import { JOB_STATES, type Job, type ListDeadOptions, type OutboxStats } from '@postback/core';
import { DEFAULT_LIST_DEAD_LIMIT } from './options.ts';
import { assertOpen, type PostgresOutboxContext } from './outbox-context.ts';
import { rowToJob, toBigintText } from './rows.ts';

type Row = Record<string, unknown>;

/**
 * The outbox's `get`, `getByOrder`, `stats`, `listDead`, `replay` and `purgeDead` methods.
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

    async getByOrder(orderId: string): Promise<Job[]> {
      assertOpen(context);
      return (await q(pool, SQL.getByOrder, [orderId])).rows.map(rowToJob);
    },

    async stats(_now: number): Promise<OutboxStats> {
      assertOpen(context);
      const [counts, oldest, nearest] = await Promise.all([
        q(pool, SQL.counts),
        q(pool, SQL.oldestPending),
        q(pool, SQL.nearestDeadline),
      ]);
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
      };
    },

    async listDead(options: ListDeadOptions = {}): Promise<Job[]> {
      assertOpen(context);
      const limit = options.limit ?? DEFAULT_LIST_DEAD_LIMIT;
      if (!Number.isSafeInteger(limit) || limit < 1)
        throw new RangeError(`listDead limit must be a positive integer, got ${limit}`);
      let after = '0';
      if (options.after !== undefined) {
        const cursor = toBigintText(options.after);
        if (cursor === null)
          throw new RangeError(
            `listDead after must be a job id of this outbox, got ${JSON.stringify(options.after)}`,
          );
        after = cursor;
      }
      return (await q(pool, SQL.listDead, [after, limit])).rows.map(rowToJob);
    },

    async replay(selection: { ids: readonly string[] } | { all: true }, at: number): Promise<number> {
      assertOpen(context);
      const ids =
        'all' in selection && selection.all === true
          ? null
          : idList((selection as { ids: readonly string[] }).ids);
      if (ids !== null && ids.length === 0) return 0;
      const result = await q(pool, SQL.replay, [at, ids, channel]);
      return result.rows.filter((row: Row) => row.next_state === 'pending').length;
    },

    async purgeDead(options: { ids?: readonly string[] } = {}): Promise<number> {
      assertOpen(context);
      const ids = options.ids === undefined ? null : idList(options.ids);
      if (ids !== null && ids.length === 0) return 0;
      return (await q(pool, SQL.purgeDead, [ids])).rowCount ?? 0;
    },
  };
}

/** The ids that can name a job of this outbox (others match no row, so they are dropped). */
function idList(ids: readonly string[]): string[] {
  return ids.map(toBigintText).filter((id): id is string => id !== null);
}

/**
 * Kysely: a `Transaction` (or the `Kysely` instance itself) runs postback's `$1, $2 …` statements as a
 * raw `CompiledQuery` on the same connection, parameters handed to the dialect's driver unchanged.
 */
import { CompiledQuery, type QueryResult } from 'kysely';
import type { Queryable, QueryResultLike } from '../queryable.ts';

/** The part of a Kysely `Transaction` / `Kysely` the adapter calls. */
export interface KyselyLike {
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
}

/**
 * Turns a Kysely transaction (the `trx` of `db.transaction().execute(async (trx) => …)`) into a
 * {@link Queryable}, for a Postgres dialect (`PostgresDialect` on `pg`, or a postgres.js dialect).
 *
 * @example
 * ```ts
 * await db.transaction().execute(async (trx) => {
 *   await trx.insertInto('orders').values(order).execute();
 *   await outbox.confirm(fromKysely(trx), { orderId: order.id, valueMicros: order.total_micros, click });
 * });
 * ```
 */
export function fromKysely(trx: KyselyLike): Queryable {
  return {
    async query(text, values = []): Promise<QueryResultLike> {
      const { rows } = await trx.executeQuery(CompiledQuery.raw(text, values));
      return { rows: rows as QueryResultLike['rows'] };
    },
  };
}

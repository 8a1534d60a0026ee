/**
 * postgres.js (`postgres` on npm): its `sql`, or the `sql` that `sql.begin` hands a transaction, runs
 * postback's `$1, $2 …` statements through `sql.unsafe(text, values)`.
 */
import type { Queryable, QueryResultLike } from '../queryable.ts';

/** The part of a postgres.js `Sql` / `TransactionSql` the adapter calls. */
export interface PostgresJsLike {
  // biome-ignore lint/suspicious/noExplicitAny: postgres.js types its parameters as `ParameterOrJSON<never>[]`.
  unsafe(query: string, parameters?: any[]): PromiseLike<ReadonlyArray<unknown> & { count?: number | null }>;
}

/**
 * Turns a postgres.js `sql` (the one `sql.begin` passes in, to enqueue inside that transaction) into a
 * {@link Queryable}. Parameters go to the server untyped, which types them from the statement, so
 * numbers, strings, booleans and `null` arrive as they would through `pg`. Columns must come back as
 * named: do not pass an `sql` created with a column `transform` (e.g. `postgres.camel`).
 *
 * @example
 * ```ts
 * await sql.begin(async (tx) => {
 *   await tx`INSERT INTO orders ${tx(order)}`;
 *   await outbox.confirm(fromPostgresJs(tx), { orderId: order.id, valueMicros: order.totalMicros, click });
 * });
 * ```
 */
export function fromPostgresJs(sql: PostgresJsLike): Queryable {
  return {
    async query(text, values = []): Promise<QueryResultLike> {
      const rows = await sql.unsafe(text, values);
      return { rows: [...rows] as QueryResultLike['rows'], rowCount: rows.count ?? null };
    },
  };
}

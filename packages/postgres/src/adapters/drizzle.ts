/**
 * Drizzle ORM: a transaction (`db.transaction(async (tx) => …)`) runs postback's statements through
 * `tx.execute(sql)`, each `$n` becoming a Drizzle parameter. Works with the `node-postgres` and
 * `postgres-js` drivers (the first resolves to `{ rows }`, the second to the rows themselves).
 */
import { type SQL, sql } from 'drizzle-orm';
import type { Queryable, QueryResultLike } from '../queryable.ts';

/** The part of a Drizzle `PgTransaction` / `PgDatabase` the adapter calls. */
export interface DrizzleLike {
  execute(query: SQL): PromiseLike<unknown>;
}

/** A `'…'` literal, a `"…"` identifier (skipped), or a bind parameter `$n` (group 1). */
const PARAMETER = /'(?:[^']|'')*'|"(?:[^"]|"")*"|\$(\d+)/g;

/**
 * A plain object as `pg` sends it (JSON text): Drizzle's postgres.js driver turns postgres.js's own
 * JSON serializer off, so an object would otherwise fail to encode there.
 */
const asPg = (value: unknown): unknown =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype
    ? JSON.stringify(value)
    : value;

/**
 * Turns a Drizzle transaction into a {@link Queryable}. Each `$n` outside quotes becomes one Drizzle
 * parameter holding the value as `pg` would take it (a plain object as JSON, an array as one array
 * parameter; a number used twice is sent twice); a statement without values (a migration script) is
 * sent as it is.
 *
 * @example
 * ```ts
 * await db.transaction(async (tx) => {
 *   await tx.insert(orders).values(order);
 *   await outbox.confirm(fromDrizzle(tx), { orderId: order.id, valueMicros: order.totalMicros, click });
 * });
 * ```
 */
export function fromDrizzle(tx: DrizzleLike): Queryable {
  return {
    async query(text, values = []): Promise<QueryResultLike> {
      const chunks: SQL[] = [];
      let last = 0;
      for (const match of values.length === 0 ? [] : text.matchAll(PARAMETER)) {
        if (match[1] === undefined) continue; // a quoted literal or identifier: left as written
        chunks.push(
          sql.raw(text.slice(last, match.index)),
          sql`${sql.param(asPg(values[Number(match[1]) - 1]))}`,
        );
        last = match.index + match[0].length;
      }
      chunks.push(sql.raw(text.slice(last)));
      const result = (await tx.execute(sql.join(chunks))) as QueryResultLike | QueryResultLike['rows'];
      return Array.isArray(result) ? { rows: [...result] } : result;
    },
  };
}

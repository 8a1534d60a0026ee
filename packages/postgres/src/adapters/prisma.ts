/**
 * Prisma ORM (with a driver adapter such as `@prisma/adapter-pg`): an interactive transaction's client
 * (`prisma.$transaction(async (tx) => …)`) runs postback's `$1, $2 …` statements through
 * `tx.$queryRawUnsafe(text, ...values)`.
 */
import type { Queryable, QueryResultLike } from '../queryable.ts';

/** The part of a Prisma client (or interactive transaction client) the adapter calls. */
export interface PrismaLike {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
}

/**
 * Turns a Prisma interactive transaction into a {@link Queryable}. Prisma returns `bigint` columns as
 * `BigInt`, which postback reads exactly. One statement per call: `migrate()` sends a multi-statement
 * script, so put `migrationScript(schema)` into a Prisma migration instead.
 *
 * @example
 * ```ts
 * await prisma.$transaction(async (tx) => {
 *   await tx.order.create({ data: order });
 *   await outbox.confirm(fromPrisma(tx), { orderId: order.id, valueMicros: order.totalMicros, click });
 * });
 * ```
 */
export function fromPrisma(tx: PrismaLike): Queryable {
  return {
    async query(text, values = []): Promise<QueryResultLike> {
      return { rows: await tx.$queryRawUnsafe<QueryResultLike['rows']>(text, ...values) };
    },
  };
}

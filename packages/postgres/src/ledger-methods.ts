/**
 * The Postgres outbox's ledger (migration 8): `appendLedger` inserts an operator action's row,
 * `readLedger` reads rows by a query; final-state rows are inserted by the `jobs_ledger` trigger in the
 * transition's own transaction. Rows are never updated.
 */
import {
  accountFromKey,
  accountKey,
  checkLedgerInput,
  type LedgerEntry,
  type LedgerInput,
  type LedgerKind,
  type LedgerQuery,
  resolveLedgerQuery,
} from '@postback/core/store';
import { assertOpen, type PostgresOutboxContext } from './outbox-context.ts';
import { quoteIdent } from './schema-name.ts';

type Row = Record<string, unknown>;

function entryOf(row: Row): LedgerEntry {
  const value = row.value_micros;
  return {
    seq: Number(row.seq),
    at: Number(row.at),
    actor: String(row.actor),
    kind: String(row.kind) as LedgerKind,
    jobId: row.job_id === null ? null : String(row.job_id),
    orderId: String(row.order_id),
    account: accountFromKey(row.account as string),
    valueMicros: value === null ? null : Number(value),
    reason: row.reason === null ? null : String(row.reason),
  };
}

/**
 * The outbox's `appendLedger` and `readLedger` (`prune` applies the ledger's retention).
 *
 * @example
 * ```ts
 * const { readLedger } = ledgerMethods(context);
 * const rows = await readLedger({ orderId: 'ord_1' });
 * ```
 */
export function ledgerMethods(context: PostgresOutboxContext) {
  const { pool, q } = context;
  const table = `${quoteIdent(context.schema)}.ledger`;
  const insert = `INSERT INTO ${table} (at, actor, kind, job_id, order_id, account, value_micros, reason)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING seq`;
  const select = `SELECT seq, at, actor, kind, job_id, order_id, account, value_micros, reason FROM ${table}
    WHERE ($1::bigint IS NULL OR at >= $1) AND ($2::text IS NULL OR order_id = $2) AND ($3::text IS NULL OR account = $3)
    ORDER BY seq LIMIT $4`;
  return {
    async appendLedger(entry: LedgerInput): Promise<LedgerEntry> {
      assertOpen(context);
      const row = checkLedgerInput(entry);
      const values = [row.at, row.actor, row.kind, row.jobId, row.orderId, accountKey(row.account)];
      const result = await q(pool, insert, [...values, row.valueMicros, row.reason]);
      return { ...row, seq: Number((result.rows[0] as Row).seq) };
    },

    async readLedger(query?: LedgerQuery): Promise<LedgerEntry[]> {
      assertOpen(context);
      const r = resolveLedgerQuery(query);
      const account = r.account === null ? null : accountKey(r.account);
      const result = await q(pool, select, [r.since, r.orderId, account, r.limit]);
      return result.rows.map((row) => entryOf(row as Row));
    },
  };
}

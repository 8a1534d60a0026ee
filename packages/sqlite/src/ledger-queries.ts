/**
 * The ledger table of the SQLite outbox (schema version 8): insert a row, read rows by a resolved query,
 * delete rows past the ledger's retention. Rows are never updated.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { EpochMs } from '@postback/core';
import type { LedgerEntry, LedgerInput, LedgerKind, ResolvedLedgerQuery } from '@postback/core/store';

interface LedgerRow {
  seq: number;
  at: number;
  actor: string;
  kind: string;
  job_id: string | null;
  order_id: string;
  account: string | null;
  value_micros: number | null;
  reason: string | null;
}

function entryOf(row: LedgerRow): LedgerEntry {
  return {
    seq: row.seq,
    at: row.at,
    actor: row.actor,
    kind: row.kind as LedgerKind,
    jobId: row.job_id,
    orderId: row.order_id,
    account: row.account,
    valueMicros: row.value_micros,
    reason: row.reason,
  };
}

/**
 * The ledger statements on `db`, prepared once. Writes must run inside the caller's transaction.
 *
 * @example
 * ```ts
 * const ledger = createLedgerQueries(db);
 * ledger.insert(row); ledger.read(resolveLedgerQuery({ orderId: 'ord_1' }));
 * ```
 */
export function createLedgerQueries(db: DatabaseSync) {
  const insert = db.prepare(
    `INSERT INTO ledger (at, actor, kind, job_id, order_id, account, value_micros, reason)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
  );
  const select = db.prepare(
    `SELECT * FROM ledger
     WHERE (?1 IS NULL OR at >= ?1) AND (?2 IS NULL OR order_id = ?2) AND (?3 IS NULL OR account = ?3)
     ORDER BY seq LIMIT ?4`,
  );
  const deleteBefore = db.prepare('DELETE FROM ledger WHERE at < ?');
  return {
    /** Inserts a checked row; returns it with its sequence number. */
    insert(row: LedgerInput): LedgerEntry {
      const { seq } = insert.get(
        row.at,
        row.actor,
        row.kind,
        row.jobId,
        row.orderId,
        row.account,
        row.valueMicros,
        row.reason,
      ) as { seq: number };
      return { ...row, seq };
    },
    /** Rows matching `query`, in insertion order. */
    read(query: ResolvedLedgerQuery): LedgerEntry[] {
      const rows = select.all(query.since, query.orderId, query.account, query.limit);
      return rows.map((row) => entryOf(row as unknown as LedgerRow));
    },
    /** Deletes the rows older than `before` (the ledger's retention); returns how many. */
    deleteBefore(before: EpochMs): number {
      return Number(deleteBefore.run(before).changes);
    },
  };
}

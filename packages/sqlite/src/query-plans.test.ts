/**
 * Bounded memory and time with a large backlog depend on every statement reading an index range, never the
 * whole table. These tests read SQLite's own query plans, so an index dropped or a query rewritten so that
 * it no longer matches a partial index fails here rather than in production with a million jobs.
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { JobFilter } from '@postback/core';
import { resolveJobFilter } from '@postback/core/store';
import { describe, expect, it } from 'vitest';
import { HELD_PROBLEMS_SQL, RELEASE_HELD_SQL } from './held-queries.ts';
import { prepareJobStatements } from './job-rows.ts';
import { createOperatorQueries } from './operator-queries.ts';
import { migrate } from './schema.ts';
import { FORGET_SWITCH_SQL, HELD_PAGE_SQL, NOTE_SWITCH_SQL } from './switch-operations.ts';

function planOf(db: DatabaseSync, statement: StatementSync): string[] {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${statement.sourceSQL}`).all() as Array<{ detail: string }>;
  return rows.map((row) => row.detail);
}

/** A plan line that reads every row of the jobs table (a SCAN not over an index). */
const fullTableScan = (line: string) => /^SCAN (jobs|[a-z])\b/.test(line) && !line.includes('INDEX');

describe('query plans of the outbox', () => {
  const db = new DatabaseSync(':memory:');
  migrate(db);
  const sql = prepareJobStatements(db);

  it('claim: each tier reads its index in its order, never the table, and sorts nothing', () => {
    const refundCheck = 'SEARCH c USING INDEX jobs_order_account_kind (order_id=? AND account=? AND kind=?)';
    // Tier 0: leases run out, by expiry. Tier 1: urgent deadlines, nearest first, any account.
    expect(planOf(db, sql.retaken)[0]).toBe('SEARCH l USING INDEX jobs_lease (lease_expires_at<?)');
    expect(planOf(db, sql.urgent)[0]).toBe('SEARCH u USING INDEX jobs_open_deadline (deadline<?)');
    // Tier 2: the accounts one seek each (a loose index scan in a recursive CTE run as a co-routine) with
    // the first due job of each, then one account's further due jobs in due order.
    for (const walk of [sql.walkAfter, sql.walkFromStart]) {
      const plan = planOf(db, walk);
      expect(plan).toContain('CO-ROUTINE walk');
      expect(plan.filter((line) => line.startsWith('SEARCH w '))).toEqual([
        'SEARCH w USING INDEX jobs_account_due (account>?)',
        'SEARCH w USING INDEX jobs_account_due (account>?)',
      ]);
      expect(plan).toContain('SEARCH a USING INDEX jobs_account_due (account=? AND next_attempt_at<?)');
      expect(plan).toContain('SEARCH f USING INTEGER PRIMARY KEY (rowid=?) LEFT-JOIN');
    }
    // Quiet accounts' first jobs: a bounded read of the newest young pending jobs, each checked against
    // its account's first due job and pending count on the account index.
    const quiet = planOf(db, sql.quiet);
    expect(quiet).toContain('SEARCH y USING INDEX jobs_state_created (state=? AND created_at>?)');
    expect(quiet).toContain('SEARCH q USING INTEGER PRIMARY KEY (rowid=?)');
    expect(quiet).toContain('SEARCH a USING INDEX jobs_account_due (account=? AND next_attempt_at<?)');
    expect(planOf(db, sql.accountDue)[0]).toBe(
      'SEARCH a USING INDEX jobs_account_due (account=? AND next_attempt_at>? AND next_attempt_at<?)',
    );
    // The refund-ordering check of every tier is one seek of the order's key.
    for (const statement of [
      sql.retaken,
      sql.urgent,
      sql.quiet,
      sql.walkAfter,
      sql.walkFromStart,
      sql.accountDue,
    ]) {
      const plan = planOf(db, statement);
      expect(plan).toContain(refundCheck);
      // The quiet tier reads the newest young jobs, at most `QUIET_SCAN` (32), takes their distinct
      // accounts and puts the jobs it keeps oldest first: the sorts of a claim, of at most 32 rows each.
      expect(plan.filter((line) => line.includes('TEMP B-TREE'))).toEqual(
        statement === sql.quiet ? ['USE TEMP B-TREE FOR DISTINCT', 'USE TEMP B-TREE FOR ORDER BY'] : [],
      );
      expect(plan.filter(fullTableScan)).toEqual([]);
    }
    // The write seeks the chosen ids by primary key.
    expect(planOf(db, sql.claim)[0]).toBe('SEARCH jobs USING INTEGER PRIMARY KEY (rowid=?)');
  });

  it('stats count on a covering index and find the oldest pending and nearest deadline by index search', () => {
    expect(planOf(db, sql.countByState)).toEqual(['SCAN jobs USING COVERING INDEX jobs_state_created']);
    expect(planOf(db, sql.oldestPending).join()).toContain(
      'SEARCH jobs USING COVERING INDEX jobs_state_created (state=?)',
    );
    expect(planOf(db, sql.nearestDeadline).join()).toContain('SEARCH jobs USING INDEX jobs_open_deadline');
  });

  it('releaseHeld and the held problems of stats read only the open held jobs (jobs_held)', () => {
    const release = planOf(db, db.prepare(RELEASE_HELD_SQL));
    expect(release.join()).toContain('USING INDEX jobs_held');
    expect(release.filter(fullTableScan)).toEqual([]);
    const problems = planOf(db, db.prepare(HELD_PROBLEMS_SQL));
    // The earliest deadline of each problem: a search of that problem's open held jobs.
    expect(problems).toEqual([
      'SCAN jobs USING INDEX jobs_held',
      'CORRELATED SCALAR SUBQUERY 1',
      'SEARCH d USING INDEX jobs_held (account=? AND held_campaign_id=?)',
    ]);
  });

  it("the switches of held campaigns read only their problem's held jobs (jobs_held)", () => {
    const problem = 'USING INDEX jobs_held (account=? AND held_campaign_id=?)';
    expect(planOf(db, db.prepare(NOTE_SWITCH_SQL))).toEqual([`SEARCH jobs EXISTS ${problem}`]);
    expect(planOf(db, db.prepare(FORGET_SWITCH_SQL))).toEqual([
      'SEARCH held_switches USING PRIMARY KEY (switch_key=?)',
      'SCALAR SUBQUERY 1',
      `SEARCH jobs ${problem}`,
    ]);
    // A decision's pages: the problem's jobs in id order straight from the index, nothing sorted.
    expect(planOf(db, db.prepare(HELD_PAGE_SQL))).toEqual([
      'SEARCH jobs USING INDEX jobs_held (account=? AND held_campaign_id=? AND rowid>?)',
    ]);
  });

  it('listDead, purge and lookups by order search indexes', () => {
    expect(planOf(db, sql.deadPage).join()).toContain('SEARCH jobs USING INDEX jobs_dead (id>?)');
    expect(planOf(db, sql.deleteDead).filter(fullTableScan)).toEqual([]);
    expect(planOf(db, sql.byOrder)).toEqual([
      'SEARCH jobs USING INDEX jobs_order_account_kind (order_id=? AND account=?)',
    ]);
    expect(planOf(db, sql.byOrderKind)).toEqual([
      'SEARCH jobs USING INDEX jobs_order_account_kind (order_id=? AND account=? AND kind=?)',
    ]);
  });

  describe("the operator's view", () => {
    const operator = createOperatorQueries(db).statements;
    const listPlan = (filter: JobFilter) => {
      const resolved = resolveJobFilter(filter);
      return planOf(db, operator.listStatement(resolved, resolved.reason === null));
    };

    it('listJobs without an indexed criterion reads the table once, sorting in SQLite (the one exception)', () => {
      // No index serves the urgency order: it would be written by every enqueue and transition (see
      // migration 3). An operator's listing reads the table; a worker never runs it.
      for (const filter of [
        {},
        { status: 503 },
        { reason: /x/ },
        { deadlineBefore: 1 },
        { updatedBefore: 1 },
      ]) {
        expect(listPlan(filter)).toEqual(['SCAN jobs', 'USE TEMP B-TREE FOR ORDER BY']);
      }
    });

    it('listJobs by state or order searches their indexes and sorts only what matched', () => {
      for (const filter of [
        { states: ['dead' as const] },
        { states: ['pending' as const, 'inflight' as const] },
      ]) {
        const plan = listPlan(filter);
        expect(plan[0]).toBe('SEARCH jobs USING INDEX jobs_state_created (state=?)');
        expect(plan.filter(fullTableScan)).toEqual([]);
      }
      expect(listPlan({ orderId: 'ord_1' })[0]).toBe(
        'SEARCH jobs USING INDEX jobs_order_account_kind (order_id=?)',
      );
      expect(listPlan({ orderId: 'ord_1', account: 'shop-a' })[0]).toBe(
        'SEARCH jobs USING INDEX jobs_order_account_kind (order_id=? AND account=?)',
      );
    });

    it('deadlines at risk are one read of the open-deadline index up to the widest bound', () => {
      expect(planOf(db, operator.riskStatement(0))).toEqual([
        'SEARCH jobs USING INDEX jobs_open_deadline (deadline<?)',
      ]);
      expect(planOf(db, operator.riskStatement(4))).toEqual([
        'SEARCH jobs USING INDEX jobs_open_deadline (deadline<?)',
      ]);
    });

    it('a prune batch reads one window of a final state by creation; deletes, history and workers seek', () => {
      expect(planOf(db, operator.pruneWindow)).toEqual([
        'SEARCH jobs USING INDEX jobs_state_created (state=? AND created_at>? AND created_at<?)',
      ]);
      expect(planOf(db, operator.deleteJob)).toEqual(['SEARCH jobs USING INTEGER PRIMARY KEY (rowid=?)']);
      expect(planOf(db, operator.history)).toEqual(['SEARCH jobs USING INTEGER PRIMARY KEY (rowid=?)']);
      expect(planOf(db, operator.recentWorkers)).toEqual(['SEARCH workers USING INDEX workers_at (at>?)']);
      expect(planOf(db, operator.forgetWorkers).join()).toContain('workers_at (at<?)');
    });
  });
});

/**
 * The claim of the SQLite outbox, in the order of core's `accounts.ts`: jobs whose lease ran out (by lease
 * expiry), then due jobs whose deadline is near (nearest first, whatever their account), then quiet
 * accounts' first jobs (an account holding at most `QUIET_MAX_PENDING` pending jobs whose first due job
 * was created less than `QUIET_WITHIN_MS` ago and never attempted: that job, oldest first, one an
 * account), then the rest in turns across accounts — the
 * first job of each account with due jobs, then a second of each, and so on, starting at the account after
 * the one the previous claim served last.
 *
 * Every read is an index range of at most what the claim takes, or bounded by a constant: the quiet tier
 * reads at most `QUIET_SCAN` of the newest pending jobs on `jobs_state_created` (created within the
 * window) and seeks each one's account's first due job and its count of pending jobs (at most
 * `QUIET_MAX_PENDING` + 1 entries) on `jobs_account_due`, keeping the first jobs of quiet accounts. The accounts are walked one seek each on
 * `jobs_account_due` (a loose index scan: `account > ?` ORDER BY account LIMIT 1, stepped by a recursive
 * CTE that also seeks each account's first due job, one statement per batch of accounts), only as far as
 * the claim needs accounts, and each account's further jobs are read in its due order, a fair share at a
 * time, so an account
 * holding a backlog of 100,000 jobs costs a claim what one holding 16 does. A job the quiet tier took is
 * not taken again by the turns: its account, if it has more due jobs, takes its turn with the next one.
 * The reads and the final
 * `UPDATE … RETURNING` run on the writer's connection in one write transaction (the group commit's), so no
 * other connection claims between them. The turn cursor lives in memory, with the connection: a restart
 * starts the turns again at the first account, which only changes who goes first. The quiet tier does not
 * move it.
 */

import { type CheckedClaim, QUIET_MAX_PENDING, QUIET_SCAN, QUIET_WITHIN_MS } from '@postback/core/store';
import type { JobRow, JobStatements } from './job-rows.ts';

/**
 * Accounts one claim walks at most (or four per job it takes, if more): with thousands of accounts whose
 * jobs all wait for a retry, a claim costs two seeks per account walked, and the next claim goes on where
 * this one stopped, so every account is still reached.
 */
export const MAX_ACCOUNTS_WALKED = 256;

/** One account's turn queue: the ids read so far in its due order, and where its next read starts. */
interface Queue {
  key: string;
  ids: number[];
  afterDue: number;
  afterId: number;
  exhausted: boolean;
}

/**
 * The claim of one connection, with its turn cursor.
 *
 * @example
 * ```ts
 * const claim = createFairClaim(prepareJobStatements(db));
 * const rows = inTransaction(db, () => claim(checkClaim({ now: Date.now(), limit: 16, leaseMs: 30_000 })));
 * ```
 */
export function createFairClaim(sql: JobStatements): (args: CheckedClaim) => JobRow[] {
  /** The account served last by a claim: the next claim's turns start after it. */
  let cursor: string | undefined;

  /** Reads up to `limit` more ids of `queue` (marks it exhausted when fewer come). */
  function fill(queue: Queue, limit: number, now: number, urgentUntil: number): void {
    const rows = sql.accountDue.all({
      account: queue.key,
      after_due: queue.afterDue,
      after_id: queue.afterId,
      now,
      urgent_until: urgentUntil,
      limit,
    }) as Array<{ id: number; due: number }>;
    for (const row of rows) queue.ids.push(row.id);
    const last = rows.at(-1);
    if (last !== undefined) {
      queue.afterDue = last.due;
      queue.afterId = last.id;
    }
    if (rows.length < limit) queue.exhausted = true;
  }

  /**
   * The turns: up to `wanted` ids taken in turns across the accounts not excluded. An account whose first
   * due job is in `taken` (the quiet tier's) takes its turn with its next due job, if it has one.
   */
  function inTurns(
    wanted: number,
    args: CheckedClaim,
    urgentUntil: number,
    taken: ReadonlySet<number>,
  ): number[] {
    const excluded = new Set(args.excludeKeys);
    const { now } = args;
    // Turn 0: the first job of each account in turn order (after the cursor, wrapping around), as many
    // accounts as the claim can serve, walking at most `maxWalk` accounts (accounts whose jobs all wait
    // for a retry have none due), in batches of one statement each.
    const maxWalk = Math.max(MAX_ACCOUNTS_WALKED, 4 * wanted);
    const queues: Queue[] = [];
    const seen = new Set<string>();
    let wrapped = cursor === undefined;
    let from = cursor;
    let walked = 0;
    let lastWalked: string | undefined;
    walking: while (walked < maxWalk && queues.length < wanted) {
      const walk = Math.min(maxWalk - walked, wanted - queues.length);
      const rows = (
        from === undefined
          ? sql.walkFromStart.all({ walk, now, urgent_until: urgentUntil })
          : sql.walkAfter.all({ after: from, walk, now, urgent_until: urgentUntil })
      ) as Array<{ account: string; id: number | null; due: number | null }>;
      for (const row of rows) {
        // Keys compare in SQL (bytes of UTF-8), never in JavaScript: the wrap stops at the first key seen.
        if (seen.has(row.account)) break walking;
        seen.add(row.account);
        walked += 1;
        lastWalked = row.account;
        from = row.account;
        if (row.id !== null && row.due !== null && !excluded.has(row.account)) {
          const queue: Queue = {
            key: row.account,
            ids: [row.id],
            afterDue: row.due,
            afterId: row.id,
            exhausted: false,
          };
          if (taken.has(row.id)) {
            // Its first due job went in the quiet tier: the turns start at its second (one seek).
            queue.ids = [];
            fill(queue, 1, now, urgentUntil);
            if (queue.ids.length === 0) continue;
          }
          queues.push(queue);
          if (queues.length === wanted) break walking;
        }
      }
      if (rows.length < walk) {
        // No account after `from`: wrap around once, to the accounts up to the cursor.
        if (wrapped) break;
        wrapped = true;
        from = undefined;
      }
    }
    const cutShort = walked === maxWalk && queues.length < wanted;
    const ids: number[] = [];
    let last: string | undefined;
    for (let turn = 0; ids.length < wanted; turn++) {
      // Read ahead for the next turns, a fair share of what is still wanted per account still in play.
      const short = queues.filter((q) => q.ids.length <= turn && !q.exhausted);
      if (short.length > 0) {
        const share = Math.ceil((wanted - ids.length) / short.length);
        for (const queue of short) fill(queue, share, args.now, urgentUntil);
      }
      let took = false;
      for (const queue of queues) {
        const id = queue.ids[turn];
        if (id === undefined) continue;
        ids.push(id);
        last = queue.key;
        took = true;
        if (ids.length === wanted) break;
      }
      if (!took) break;
    }
    // Cut short, the next claim goes on after the accounts walked (those not served had nothing due).
    cursor = cutShort ? lastWalked : (last ?? cursor);
    return ids;
  }

  return (args) => {
    const { now, limit } = args;
    const urgentUntil = now + args.urgentWithinMs;
    const excluded = JSON.stringify(args.excludeKeys);
    const ids = (sql.retaken.all({ now, excluded, limit }) as Array<{ id: number }>).map((r) => r.id);
    if (ids.length < limit) {
      const urgent = sql.urgent.all({
        now,
        urgent_until: urgentUntil,
        excluded,
        limit: limit - ids.length,
      }) as Array<{ id: number }>;
      for (const row of urgent) ids.push(row.id);
    }
    const quiet = new Set<number>();
    if (ids.length < limit) {
      const rows = sql.quiet.all({
        now,
        urgent_until: urgentUntil,
        quiet_since: now - QUIET_WITHIN_MS,
        scan: QUIET_SCAN,
        max_pending: QUIET_MAX_PENDING,
        excluded,
        limit: limit - ids.length,
      }) as Array<{ id: number }>;
      for (const row of rows) {
        ids.push(row.id);
        quiet.add(row.id);
      }
    }
    if (ids.length < limit) ids.push(...inTurns(limit - ids.length, args, urgentUntil, quiet));
    if (ids.length === 0) return [];
    const rows = sql.claim.all({
      now,
      expires_at: now + args.leaseMs,
      ids: JSON.stringify(ids),
    }) as unknown as JobRow[];
    // RETURNING order is unspecified: hand them out in the order they were chosen.
    const rank = new Map(ids.map((id, i) => [id, i]));
    return rows.sort((a, b) => (rank.get(a.id) ?? 0) - (rank.get(b.id) ?? 0));
  };
}

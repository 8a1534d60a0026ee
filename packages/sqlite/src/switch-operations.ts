/**
 * The switches of held campaigns in SQL (core's `OutboxSwitches`, issue 31): `held_switches` keeps one row
 * per held problem seen accepting s2s (its `switch_key` is core's `switchKey`), and a decision reads the
 * problem's pending held jobs on `jobs_held`, which holds only open held jobs. Each operation runs inside
 * the outbox's write transaction, so `note` reads the held jobs and writes the switch at one moment, and
 * `decide` writes every job of the problem, their ledger rows and the switch's end at another.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { Job } from '@postback/core';
import {
  accountFromKey,
  accountKey,
  decideHeldJob,
  type HeldDecisionOptions,
  heldDecisionFor,
  isDecidable,
  type ShadowDecided,
  type SwitchSeen,
  switchKey,
} from '@postback/core/store';
import { type JobRow, jobFromRow, ROW_COLUMNS } from './job-rows.ts';

/** What the switch operations need of the outbox's own operations. */
export interface SwitchJobHooks {
  /** Writes a job that holds no lease, its final ledger row and its waiting refund following it. */
  update(before: Job, after: Job): void;
}

/**
 * The pending held jobs of one problem (`:account` as its key, `:campaign` null for none). The predicate
 * repeats `jobs_held`'s, so SQLite may read that index alone.
 */
const PENDING_HELD = `held_at IS NOT NULL AND state IN ('pending', 'inflight') AND state = 'pending'
   AND account = :account AND held_campaign_id IS :campaign`;

/** Keeps a switch (`:key`, `:account`, `:campaign`, `:at`) when it is new and jobs are held for it. */
export const NOTE_SWITCH_SQL = `
  INSERT INTO held_switches (switch_key, account, campaign_id, seen_at)
    SELECT :key, :account, :campaign, :at
     WHERE EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_held WHERE ${PENDING_HELD})
  ON CONFLICT (switch_key) DO NOTHING`;

/** A page of the problem's pending held jobs created before `:before` (null: any), by id after `:after`. */
export const HELD_PAGE_SQL = `
  SELECT ${ROW_COLUMNS} FROM jobs INDEXED BY jobs_held
   WHERE ${PENDING_HELD} AND (:before IS NULL OR created_at < :before) AND id > :after
   ORDER BY id LIMIT :limit`;

/** Forgets the switch `:key` once no job of its problem is held. */
export const FORGET_SWITCH_SQL = `
  DELETE FROM held_switches WHERE switch_key = :key
     AND NOT EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_held WHERE ${PENDING_HELD})`;

/** A page of held jobs decided at a time. */
const PAGE = 500;

interface SwitchRow {
  account: string;
  campaign_id: string;
  seen_at: number;
}

/** Required options of a decision, as core's `checkHeldDecision` returns them. */
export type CheckedHeldDecision = Required<HeldDecisionOptions>;

/** The switch operations of one connection. */
export function createSwitchOperations(db: DatabaseSync, hooks: SwitchJobHooks) {
  const sql = {
    note: db.prepare(NOTE_SWITCH_SQL),
    list: db.prepare('SELECT account, campaign_id, seen_at FROM held_switches ORDER BY seen_at, switch_key'),
    heldPage: db.prepare(HELD_PAGE_SQL),
    forget: db.prepare(FORGET_SWITCH_SQL),
  };

  return {
    /** Notes a checked switch when jobs are held for it and it is new; see `OutboxSwitches.note`. */
    switchNote(seen: SwitchSeen): boolean {
      const { changes } = sql.note.run({
        key: switchKey(seen.account, seen.campaignId),
        account: accountKey(seen.account),
        campaign: seen.campaignId,
        at: seen.at,
      });
      return Number(changes) === 1;
    },

    /** The switches not yet decided, oldest first. */
    switchList(): SwitchSeen[] {
      return (sql.list.all() as unknown as SwitchRow[]).map((row) => ({
        account: accountFromKey(row.account),
        campaignId: row.campaign_id,
        at: row.seen_at,
      }));
    },

    /**
     * Decides the pending held jobs of a checked problem (core's `decideHeldJob`), a page at a time, and
     * forgets its switch once none of its jobs is held.
     */
    switchDecide(options: CheckedHeldDecision): ShadowDecided[] {
      const problem = { account: accountKey(options.account), campaign: options.campaignId };
      const decided: ShadowDecided[] = [];
      let after = 0;
      for (;;) {
        const page = (
          sql.heldPage.all({
            ...problem,
            before: options.createdBefore,
            after,
            limit: PAGE,
          }) as unknown as JobRow[]
        ).map(jobFromRow);
        if (page.length === 0) break;
        for (const job of page) {
          if (!isDecidable(job, options)) continue;
          const next = decideHeldJob(job, options.decision, options.now);
          hooks.update(job, next);
          decided.push({ decision: heldDecisionFor(job, options.decision), job: next });
        }
        after = Number((page[page.length - 1] as Job).id);
      }
      sql.forget.run({ key: switchKey(options.account, options.campaignId), ...problem });
      return decided;
    },
  };
}

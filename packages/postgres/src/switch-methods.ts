/**
 * The switches of held campaigns on Postgres (core's `OutboxSwitches`, issue 31): `held_switches` keeps one
 * row per held problem seen accepting s2s (its `switch_key` is core's `switchKey`). `decide` locks the
 * problem's pending held jobs (`FOR UPDATE`, read on `jobs_held`), writes what core's `decideHeldJob`
 * makes of them in one UPDATE (the `jobs_ledger` trigger writes the expired ones' rows), lets their waiting
 * refunds follow and forgets the switch once none of its jobs is held, all in one transaction. `note`
 * locks a pending held job of the problem `FOR SHARE` in the statement that inserts the switch, so it
 * waits for a decision in progress and then finds nothing held: a decided problem is never noted again
 * by a sighting that raced its decision.
 */
import {
  accountFromKey,
  accountKey,
  checkHeldDecision,
  checkSwitchSeen,
  decideHeldJob,
  heldDecisionFor,
  isDecidable,
  type OutboxSwitches,
  type ShadowDecided,
  switchKey,
} from '@postback/core/store';
import { assertOpen, inTransaction, type PostgresOutboxContext } from './outbox-context.ts';
import type { Queryable } from './queryable.ts';
import { JOB_COLUMNS, rowToJob } from './rows.ts';
import { quoteIdent } from './schema-name.ts';

type Row = Record<string, unknown>;

/**
 * The pending held jobs of one problem (`$a` its account key, `$c` its campaign, null for none); the
 * predicate repeats `jobs_held`'s so the planner may read that index alone.
 */
function pendingHeld(a: string, c: string): string {
  return `held_at IS NOT NULL AND state IN ('pending', 'inflight') AND state = 'pending'
    AND account = ${a} AND held_campaign_id IS NOT DISTINCT FROM ${c}`;
}

/** The statements of the switches in schema `s` (quoted). */
export function switchStatements(s: string) {
  return {
    note: `WITH held AS (SELECT 1 FROM ${s}.jobs WHERE ${pendingHeld('$2', '$3::text')} LIMIT 1 FOR SHARE)
      INSERT INTO ${s}.held_switches (switch_key, account, campaign_id, seen_at)
      SELECT $1, $2, $3, $4 FROM held ON CONFLICT (switch_key) DO NOTHING`,
    list: `SELECT account, campaign_id, seen_at FROM ${s}.held_switches ORDER BY seen_at, switch_key`,
    held: `SELECT ${JOB_COLUMNS} FROM ${s}.jobs WHERE ${pendingHeld('$1', '$2::text')}
      AND ($3::bigint IS NULL OR created_at < $3::bigint) ORDER BY id FOR UPDATE`,
    decide: `UPDATE ${s}.jobs AS j SET state = v.state, updated_at = $2::bigint, next_attempt_at = v.next_attempt_at,
      last_error = v.last_error, held_at = NULL, held_campaign_id = NULL
      FROM unnest($1::bigint[], $3::text[], $4::bigint[], $5::text[]) AS v(id, state, next_attempt_at, last_error)
      WHERE j.id = v.id`,
    forget: `DELETE FROM ${s}.held_switches WHERE switch_key = $1
      AND NOT EXISTS (SELECT 1 FROM ${s}.jobs WHERE ${pendingHeld('$2', '$3::text')})`,
  };
}

/**
 * The outbox's `switches`.
 *
 * @example
 * ```ts
 * const switches = switchMethods(context);
 * await switches.decide({ account: 'shop_a', campaignId: 'cmp_8f3a', decision: 'drop', now: Date.now() });
 * ```
 */
export function switchMethods(context: PostgresOutboxContext): OutboxSwitches {
  const { pool, q, channel, refundWindowMs, sql: SQL } = context;
  const S = switchStatements(quoteIdent(context.schema));
  /** Confirms that ended: their waiting refunds follow (core's refundAfterConfirm), in `db`. */
  const follow = (db: Queryable, ids: string[]) =>
    ids.length === 0 ? Promise.resolve() : q(db, SQL.followConfirms, [ids, refundWindowMs, channel]);

  return {
    async note(seen) {
      assertOpen(context);
      const checked = checkSwitchSeen(seen);
      const key = switchKey(checked.account, checked.campaignId);
      const values = [key, accountKey(checked.account), checked.campaignId, checked.at];
      return ((await q(pool, S.note, values)).rowCount ?? 0) === 1;
    },

    async list() {
      assertOpen(context);
      return (await q(pool, S.list)).rows.map((row: Row) => ({
        account: accountFromKey(String(row.account)),
        campaignId: String(row.campaign_id),
        at: Number(row.seen_at),
      }));
    },

    async decide(options) {
      assertOpen(context);
      const checked = checkHeldDecision(options);
      const account = accountKey(checked.account);
      return inTransaction(pool, async (tx) => {
        const held = await q(tx, S.held, [account, checked.campaignId, checked.createdBefore]);
        const decided: ShadowDecided[] = [];
        for (const job of held.rows.map(rowToJob)) {
          if (!isDecidable(job, checked)) continue;
          const next = decideHeldJob(job, checked.decision, checked.now);
          decided.push({ decision: heldDecisionFor(job, checked.decision), job: next });
        }
        if (decided.length > 0) {
          const jobs = decided.map((d) => d.job);
          await q(tx, S.decide, [
            jobs.map((job) => job.id),
            checked.now,
            jobs.map((job) => job.state),
            jobs.map((job) => job.nextAttemptAt),
            jobs.map((job) => job.lastError),
          ]);
          await follow(
            tx,
            jobs.filter((job) => job.kind === 'confirm' && job.state !== 'pending').map((job) => job.id),
          );
          if (jobs.some((job) => job.state === 'pending')) await q(tx, SQL.notify, [channel]);
        }
        await q(tx, S.forget, [switchKey(checked.account, checked.campaignId), account, checked.campaignId]);
        return decided;
      });
    },
  };
}

/**
 * Shadow mode on Postgres (core's `OutboxShadow`): the settings (`shadow_settings`), the spend readings
 * (`shadow_spend`) and the jobs recorded in shadow mode (found by `jobs_shadow`). `record` reads the
 * setting `FOR SHARE` in the transaction that records the job, and `end` deletes it before it decides the
 * recorded jobs, so the two serialise: a job is either recorded before the end (and decided by it) or sees
 * the setting gone and is sent as usual, never left recorded after the decision. Core's shadow rules
 * decide; this module persists what they return.
 */
import type { EpochMs, Job, OutboxShadow, ShadowScope } from '@postback/core';
import {
  accountFromKey,
  accountKey,
  checkEpoch,
  checkShadowEnd,
  checkShadowRecord,
  checkShadowScope,
  checkSpendReading,
  coversAccount,
  decideAtShadowEnd,
  decidedAtEnd,
  endShadowJob,
  isShadowable,
  SHADOW_RECORDED_REASON,
  type ShadowDecided,
  type ShadowSetting,
  shadowRecordJob,
  shadowScopeKey,
  shadowSettingOf,
} from '@postback/core/store';
import { assertOpen, inTransaction, type PostgresOutboxContext } from './outbox-context.ts';
import type { Queryable } from './queryable.ts';
import { JOB_COLUMNS, rowToJob } from './rows.ts';
import { quoteIdent } from './schema-name.ts';

type Row = Record<string, unknown>;

/** The statements of shadow mode in schema `s` (quoted). */
function shadowStatements(s: string) {
  return {
    insertSetting: `INSERT INTO ${s}.shadow_settings (scope_key, account, since) VALUES ($1, $2, $3) ON CONFLICT (scope_key) DO NOTHING`,
    setting: `SELECT scope_key, account, since FROM ${s}.shadow_settings WHERE scope_key = $1`,
    settings: `SELECT scope_key, account, since FROM ${s}.shadow_settings ORDER BY since, scope_key`,
    settingsOf: `SELECT scope_key, account, since FROM ${s}.shadow_settings WHERE scope_key IN ('*', $1) FOR SHARE`,
    deleteSetting: `DELETE FROM ${s}.shadow_settings WHERE scope_key = $1`,
    record: `UPDATE ${s}.jobs SET state = 'cancelled', attempts = $3, updated_at = $4, last_error = $5,
      lease_token = NULL, lease_expires_at = NULL, held_at = NULL, held_campaign_id = NULL
      WHERE id = $1 AND state = 'inflight' AND lease_token = $2 RETURNING kind`,
    recorded: `SELECT ${JOB_COLUMNS} FROM ${s}.jobs
      WHERE state = 'cancelled' AND last_error = '${SHADOW_RECORDED_REASON}' ORDER BY id FOR UPDATE`,
    hasRefund: `SELECT 1 FROM ${s}.jobs WHERE order_id = $1 AND account = $2 AND kind = 'refund'`,
    decide: `UPDATE ${s}.jobs SET state = $2, attempts = $3, updated_at = $4, next_attempt_at = $5, last_error = $6
      WHERE id = $1`,
    insertReading: `INSERT INTO ${s}.shadow_spend (account, at, campaigns) VALUES ($1, $2, $3::jsonb)`,
    readings: `SELECT account, at, campaigns FROM ${s}.shadow_spend WHERE at >= $1 ORDER BY at, id`,
  };
}

const settingOf = (row: Row): ShadowSetting =>
  row.scope_key === '*'
    ? shadowSettingOf({ all: true }, Number(row.since))
    : shadowSettingOf({ account: accountFromKey(String(row.account)) }, Number(row.since));

/**
 * The outbox's `shadow`.
 *
 * @example
 * ```ts
 * const shadow = shadowMethods(context);
 * await shadow.start({ all: true }, Date.now());
 * ```
 */
export function shadowMethods(context: PostgresOutboxContext): OutboxShadow {
  const { pool, q, channel, refundWindowMs, sql: SQL } = context;
  const S = shadowStatements(quoteIdent(context.schema));
  /** A confirm that changed state: its waiting refund follows (core's refundAfterConfirm), in `db`. */
  const follow = (db: Queryable, ids: string[]) =>
    ids.length === 0 ? Promise.resolve() : q(db, SQL.followConfirms, [ids, refundWindowMs, channel]);

  return {
    async start(scope: ShadowScope, now: EpochMs) {
      assertOpen(context);
      const checked = checkShadowScope(scope);
      const at = checkEpoch(now, 'now');
      const key = shadowScopeKey(checked);
      await q(pool, S.insertSetting, [key, 'all' in checked ? '' : accountKey(checked.account), at]);
      return settingOf((await q(pool, S.setting, [key])).rows[0] as Row);
    },

    async settings() {
      assertOpen(context);
      return (await q(pool, S.settings)).rows.map(settingOf);
    },

    async record(job, options) {
      assertOpen(context);
      const { job: claimed, now } = checkShadowRecord(job, options);
      if (!isShadowable(claimed, now)) return 'not-shadowed';
      return inTransaction(pool, async (tx) => {
        const settings = (await q(tx, S.settingsOf, [`=${accountKey(claimed.account)}`])).rows.map(settingOf);
        if (!coversAccount(settings, claimed.account)) return 'not-shadowed';
        const next: Job = shadowRecordJob(claimed, now);
        const values = [claimed.id, claimed.lease?.token ?? null, next.attempts, now, next.lastError];
        const updated = (await q(tx, S.record, values)).rows[0];
        if (updated === undefined) return 'lost';
        if (updated.kind === 'confirm') await follow(tx, [claimed.id]);
        return 'recorded';
      });
    },

    async end(scope, options) {
      assertOpen(context);
      const { scope: checked, now, sendCreatedFrom } = checkShadowEnd(scope, options);
      return inTransaction(pool, async (tx) => {
        const ended = ((await q(tx, S.deleteSetting, [shadowScopeKey(checked)])).rowCount ?? 0) > 0;
        const remaining = (await q(tx, S.settings)).rows.map(settingOf);
        const decided: ShadowDecided[] = [];
        const confirms: string[] = [];
        for (const job of (await q(tx, S.recorded)).rows.map(rowToJob)) {
          if (!decidedAtEnd(job, remaining)) continue;
          const decision = decideAtShadowEnd(job, { sendCreatedFrom });
          const refunds = await q(tx, S.hasRefund, [job.orderId, accountKey(job.account)]);
          const next = endShadowJob(job, decision, {
            now,
            orderHasRefund: refunds.rows.length > 0,
            sendCreatedFrom,
          });
          await q(tx, S.decide, [
            job.id,
            next.state,
            next.attempts,
            next.updatedAt,
            next.nextAttemptAt,
            next.lastError,
          ]);
          if (next.kind === 'confirm' && next.state !== 'pending') confirms.push(next.id);
          decided.push({ decision, job: next });
        }
        await follow(tx, confirms);
        if (decided.some((d) => d.job.state === 'pending'))
          await q(tx, "SELECT pg_notify($1, '')", [channel]);
        return { ended, decided };
      });
    },

    async noteSpend(reading) {
      assertOpen(context);
      const checked = checkSpendReading(reading);
      await q(pool, S.insertReading, [
        accountKey(checked.account),
        checked.at,
        JSON.stringify(checked.campaigns),
      ]);
    },

    async spend(options) {
      assertOpen(context);
      const since = checkEpoch(options?.since, 'since');
      return (await q(pool, S.readings, [since])).rows.map((row: Row) => ({
        account: accountFromKey(String(row.account)),
        at: Number(row.at),
        campaigns: row.campaigns as Array<{ campaignId: string; spendMicros: number }>,
      }));
    },
  };
}

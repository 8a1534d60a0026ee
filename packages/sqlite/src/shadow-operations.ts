/**
 * Shadow mode in SQL (core's `OutboxShadow`): the settings (`shadow_settings`, one row per scope), the spend
 * readings (`shadow_spend`, one row per reading, its campaigns as JSON) and the jobs recorded in shadow
 * mode, found by `jobs_shadow` (which holds only them). Each operation runs inside the outbox's write
 * transaction, so `record` reads the setting and writes the job at one moment, and `end` forgets the
 * setting and decides every recorded job at another: a worker never records a job after its decision.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { EpochMs, Job, ShadowScope } from '@postback/core';
import {
  accountFromKey,
  accountKey,
  coversAccount,
  decideAtShadowEnd,
  decidedAtEnd,
  endShadowJob,
  isShadowable,
  SHADOW_RECORDED_REASON,
  type ShadowDecided,
  type ShadowEndResult,
  type ShadowSetting,
  type SpendReading,
  shadowRecordJob,
  shadowScopeKey,
  shadowSettingOf,
} from '@postback/core/store';
import { type JobRow, jobFromRow, ROW_COLUMNS } from './job-rows.ts';

/** What the shadow operations need of the outbox's own operations. */
export interface ShadowJobHooks {
  /** Applies a fenced transition to a claimed job (a confirm's waiting refund follows); null when it lost its lease. */
  transition(claimed: Pick<Job, 'id' | 'lease'>, apply: (stored: Job) => Job): Job | null;
  /** Writes a job that holds no lease; a confirm's waiting refund follows it. */
  update(job: Job): void;
  /** Whether the order of `job` has a refund job. */
  hasRefund(job: Job): boolean;
}

interface SettingRow {
  scope_key: string;
  account: string;
  since: number;
}

/** A page of recorded jobs read at a time by `end`. */
const PAGE = 500;

/** The shadow operations of one connection. */
export function createShadowOperations(db: DatabaseSync, hooks: ShadowJobHooks) {
  const sql = {
    insertSetting: db.prepare(
      'INSERT INTO shadow_settings (scope_key, account, since) VALUES (?, ?, ?) ON CONFLICT (scope_key) DO NOTHING',
    ),
    setting: db.prepare('SELECT scope_key, account, since FROM shadow_settings WHERE scope_key = ?'),
    settings: db.prepare('SELECT scope_key, account, since FROM shadow_settings ORDER BY since, scope_key'),
    deleteSetting: db.prepare('DELETE FROM shadow_settings WHERE scope_key = ?'),
    recordedPage: db.prepare(
      `SELECT ${ROW_COLUMNS} FROM jobs INDEXED BY jobs_shadow
        WHERE state = 'cancelled' AND last_error = '${SHADOW_RECORDED_REASON}' AND id > ? ORDER BY id LIMIT ?`,
    ),
    insertReading: db.prepare('INSERT INTO shadow_spend (account, at, campaigns) VALUES (?, ?, ?)'),
    readings: db.prepare('SELECT account, at, campaigns FROM shadow_spend WHERE at >= ? ORDER BY at, id'),
  };

  const settingOf = (row: SettingRow): ShadowSetting =>
    row.scope_key === '*'
      ? shadowSettingOf({ all: true }, row.since)
      : shadowSettingOf({ account: accountFromKey(row.account) }, row.since);
  const allSettings = () => (sql.settings.all() as unknown as SettingRow[]).map(settingOf);

  return {
    /** Turns shadow mode on for a checked scope (kept as it was when on already). */
    shadowStart(scope: ShadowScope, now: EpochMs): ShadowSetting {
      const key = shadowScopeKey(scope);
      sql.insertSetting.run(key, 'all' in scope ? '' : accountKey(scope.account), now);
      return settingOf(sql.setting.get(key) as unknown as SettingRow);
    },

    /** Every scope in shadow mode, oldest first. */
    shadowSettings(): ShadowSetting[] {
      return allSettings();
    },

    /** Records a claimed job (checked) when its account is in shadow mode now; see `OutboxShadow.record`. */
    shadowRecord(job: Job, now: EpochMs): 'recorded' | 'not-shadowed' | 'lost' {
      if (!coversAccount(allSettings(), job.account) || !isShadowable(job, now)) return 'not-shadowed';
      return hooks.transition(job, (stored) => shadowRecordJob(stored, now)) === null ? 'lost' : 'recorded';
    },

    /** Ends shadow mode for a checked scope and decides the recorded jobs no setting covers any more. */
    shadowEnd(scope: ShadowScope, now: EpochMs, sendCreatedFrom: EpochMs | null): ShadowEndResult {
      const ended = Number(sql.deleteSetting.run(shadowScopeKey(scope)).changes) > 0;
      const remaining = allSettings();
      const decided: ShadowDecided[] = [];
      let after = 0;
      for (;;) {
        const page = (sql.recordedPage.all(after, PAGE) as unknown as JobRow[]).map(jobFromRow);
        if (page.length === 0) return { ended, decided };
        for (const job of page) {
          if (!decidedAtEnd(job, remaining)) continue;
          const decision = decideAtShadowEnd(job, { sendCreatedFrom });
          const orderHasRefund = hooks.hasRefund(job);
          const next = endShadowJob(job, decision, { now, orderHasRefund, sendCreatedFrom });
          hooks.update(next);
          decided.push({ decision, job: next });
        }
        after = Number((page[page.length - 1] as Job).id);
      }
    },

    /** Keeps a checked spend reading. */
    noteSpend(reading: SpendReading): void {
      sql.insertReading.run(accountKey(reading.account), reading.at, JSON.stringify(reading.campaigns));
    },

    /** The spend readings at or after `since`, oldest first. */
    spend(since: EpochMs): SpendReading[] {
      const rows = sql.readings.all(since) as unknown as Array<{
        account: string;
        at: number;
        campaigns: string;
      }>;
      return rows.map((row) => ({
        account: accountFromKey(row.account),
        at: row.at,
        campaigns: JSON.parse(row.campaigns) as SpendReading['campaigns'],
      }));
    },
  };
}

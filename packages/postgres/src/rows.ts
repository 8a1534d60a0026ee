/**
 * The `jobs` table's columns and the mapping of one row to a `Job`. Postgres returns `bigint` as a string
 * (it may exceed 2^53); every time and amount we store is a safe integer, so it converts exactly.
 */
import type { ConfirmJob, Job, JobKind, JobState, RefundJob } from '@postback/core';
import { accountFromKey } from '@postback/core/store';

/** The select list every query that returns jobs uses (ids and lease tokens stay strings). */
export const JOB_COLUMNS =
  'id::text AS id, kind, order_id, account, state, attempts, created_at, updated_at, next_attempt_at, deadline, last_error, ' +
  'lease_token::text AS lease_token, lease_expires_at, delivered_at, campaign_id, maybe_applied_at, click_token, value_micros, ' +
  'clicked_at, campaign_from, held_at, held_campaign_id';

const num = (value: unknown): number => Number(value);
const numOrNull = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

/** Turns a row selected with {@link JOB_COLUMNS} into a `Job`. */
export function rowToJob(row: Record<string, unknown>): Job {
  const common = {
    id: String(row.id),
    orderId: String(row.order_id),
    // Stored as core's accountKey ('' for none); a row of a schema read before migration 4 has no column.
    account: accountFromKey(row.account as string | null | undefined),
    state: row.state as JobState,
    attempts: num(row.attempts),
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
    nextAttemptAt: num(row.next_attempt_at),
    deadline: numOrNull(row.deadline),
    lastError: (row.last_error as string | null) ?? null,
    lease:
      row.lease_token === null || row.lease_token === undefined
        ? null
        : { token: String(row.lease_token), expiresAt: num(row.lease_expires_at) },
    deliveredAt: numOrNull(row.delivered_at),
    campaignId: (row.campaign_id as string | null) ?? null,
    maybeAppliedAt: numOrNull(row.maybe_applied_at),
    // A row of a schema read before migration 5 has neither column: not held.
    heldAt: numOrNull(row.held_at),
    heldCampaignId: (row.held_campaign_id as string | null | undefined) ?? null,
  };
  if ((row.kind as JobKind) === 'confirm') {
    const job: ConfirmJob = {
      kind: 'confirm',
      ...common,
      clickToken: String(row.click_token),
      valueMicros: num(row.value_micros),
      clickedAt: num(row.clicked_at),
    };
    return job;
  }
  // A row of a schema read before migration 5 has no column: its source is unknown (null).
  const campaignFrom = (row.campaign_from as RefundJob['campaignFrom'] | undefined) ?? null;
  const job: RefundJob = { kind: 'refund', ...common, campaignFrom };
  return job;
}

const INT8_MAX = 9_223_372_036_854_775_807n;

/**
 * A job id or lease token as the database holds it (a positive bigint in decimal), or null when the
 * string cannot be one (so a foreign or forged id matches nothing instead of raising a cast error).
 */
export function toBigintText(value: unknown): string | null {
  if (typeof value !== 'string' || !/^[1-9][0-9]{0,18}$/.test(value)) return null;
  return BigInt(value) <= INT8_MAX ? value : null;
}

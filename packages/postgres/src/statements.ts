/**
 * Every SQL statement of the outbox, built once per schema. Kept apart from the outbox so the statements
 * can be read (and their query plans tested) in one place. `$n` are bind parameters; the schema name
 * was validated and is quoted.
 */
import { MAX_REASON_LENGTH } from '@postback/core';
import { JOB_COLUMNS } from './rows.ts';

/**
 * The outbox's statements for one quoted schema name.
 *
 * @example
 * ```ts
 * const sql = jobStatements('"postback"');
 * await pool.query(sql.get, ['42']);
 * ```
 */
export function jobStatements(s: string) {
  return {
    insertConfirm: `INSERT INTO ${s}.jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline, click_token, value_micros, clicked_at)
    VALUES ('confirm', $1, 'pending', 0, $2, $2, $2, $3, $4, $5, $6)
    ON CONFLICT (order_id, kind) DO NOTHING
    RETURNING ${JOB_COLUMNS}, CASE WHEN $8::boolean THEN pg_notify($7, '') IS NULL END AS notified`,
    insertRefund: `INSERT INTO ${s}.jobs (kind, order_id, state, attempts, created_at, updated_at, next_attempt_at, deadline, campaign_id)
    VALUES ('refund', $1, 'pending', 0, $2, $2, $2, $3, $4)
    ON CONFLICT (order_id, kind) DO NOTHING
    RETURNING ${JOB_COLUMNS}, CASE WHEN $6::boolean THEN pg_notify($5, '') IS NULL END AS notified`,
    byOrderAndKind: `SELECT ${JOB_COLUMNS} FROM ${s}.jobs WHERE order_id = $1 AND kind = $2`,
    lockOrder: `SELECT ${JOB_COLUMNS} FROM ${s}.jobs WHERE order_id = $1 ORDER BY kind FOR UPDATE`,
    cancelConfirm: `UPDATE ${s}.jobs SET state = 'cancelled', updated_at = $2, last_error = $3, lease_token = NULL, lease_expires_at = NULL
    WHERE id = $1 AND state IN ('pending', 'dead') RETURNING ${JOB_COLUMNS}`,
    // A refund waits while its order's confirm may still be sent; `due_at` already excludes refunds
    // without a deadline, the confirm lookup (one probe of the unique index) covers a confirm enqueued
    // after its refund. `= ANY(ARRAY(...))` makes the locking subquery run once, up front, and the UPDATE
    // fetch its rows by primary key, whatever the table's statistics say.
    claim: `UPDATE ${s}.jobs AS j
    SET state = 'inflight', attempts = j.attempts + 1, updated_at = $1,
        lease_token = nextval('${s}.lease_tokens'), lease_expires_at = $1::bigint + $3::bigint
    WHERE j.id = ANY (ARRAY(
      SELECT c.id FROM ${s}.jobs AS c
      WHERE c.due_at <= $1
        AND (c.kind = 'confirm' OR coalesce((
          SELECT b.state NOT IN ('pending', 'inflight') FROM ${s}.jobs AS b WHERE b.order_id = c.order_id AND b.kind = 'confirm'), true))
      ORDER BY c.due_at, c.id
      LIMIT $2
      FOR UPDATE SKIP LOCKED))
    RETURNING ${JOB_COLUMNS}`,
    completeMany: `UPDATE ${s}.jobs AS j SET state = 'delivered', updated_at = v.at, delivered_at = v.at, lease_token = NULL,
      lease_expires_at = NULL, last_error = NULL,
      campaign_id = CASE WHEN j.kind = 'confirm' THEN coalesce(v.campaign_id, j.campaign_id) ELSE j.campaign_id END
    FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[]) AS v(id, token, at, campaign_id)
    WHERE j.id = v.id AND j.state = 'inflight' AND j.lease_token = v.token
    RETURNING j.id::text AS id`,
    followDeliveredMany: `UPDATE ${s}.jobs AS r
    SET campaign_id = coalesce(r.campaign_id, c.campaign_id), deadline = c.delivered_at + $2::bigint,
        updated_at = greatest(r.updated_at, c.delivered_at)
    FROM ${s}.jobs AS c
    WHERE c.id = ANY ($1::bigint[]) AND c.kind = 'confirm' AND c.state = 'delivered'
      AND r.order_id = c.order_id AND r.kind = 'refund' AND r.state = 'pending' AND r.deadline IS NULL
    RETURNING pg_notify($3, '') IS NULL AS notified`,
    retry: `UPDATE ${s}.jobs SET state = 'pending', attempts = CASE WHEN $5 THEN attempts ELSE greatest(attempts - 1, 0) END,
      updated_at = $3, next_attempt_at = $4, last_error = $6, lease_token = NULL, lease_expires_at = NULL
    WHERE id = $1 AND state = 'inflight' AND lease_token = $2`,
    fail: `UPDATE ${s}.jobs SET state = $4, updated_at = $3, last_error = $5, lease_token = NULL, lease_expires_at = NULL
    WHERE id = $1 AND state = 'inflight' AND lease_token = $2 RETURNING kind`,
    cancelWaitingRefund: `UPDATE ${s}.jobs AS r
    SET state = 'cancelled', updated_at = $2,
        last_error = 'cancelled: the confirmation ended ' || c.state || ' without being accepted, so nothing was charged'
    FROM ${s}.jobs AS c
    WHERE c.id = $1 AND c.state IN ('dead', 'expired') AND r.order_id = c.order_id AND r.kind = 'refund' AND r.state = 'pending'`,
    release: `UPDATE ${s}.jobs AS j SET state = 'pending', attempts = greatest(j.attempts - 1, 0), updated_at = $3, next_attempt_at = $3,
      lease_token = NULL, lease_expires_at = NULL
    FROM unnest($1::bigint[], $2::bigint[]) AS r(id, token)
    WHERE j.id = r.id AND j.state = 'inflight' AND j.lease_token = r.token
    RETURNING pg_notify($4, '') IS NULL AS notified`,
    extendLease: `UPDATE ${s}.jobs SET lease_expires_at = $3::bigint + $4::bigint, updated_at = $3
    WHERE id = $1 AND state = 'inflight' AND lease_token = $2`,
    get: `SELECT ${JOB_COLUMNS} FROM ${s}.jobs WHERE id = $1`,
    getByOrder: `SELECT ${JOB_COLUMNS} FROM ${s}.jobs WHERE order_id = $1 ORDER BY kind`,
    counts: `SELECT state, count(*)::int AS n FROM ${s}.jobs GROUP BY state`,
    oldestPending: `SELECT min(created_at) AS at FROM ${s}.jobs WHERE state = 'pending'`,
    nearestDeadline: `SELECT id::text AS id, order_id, kind, deadline FROM ${s}.jobs
    WHERE state IN ('pending', 'inflight') AND deadline IS NOT NULL ORDER BY deadline, id LIMIT 1`,
    listDead: `SELECT ${JOB_COLUMNS} FROM ${s}.jobs WHERE state = 'dead' AND id > $1 ORDER BY id LIMIT $2`,
    // The same decision as core's replayJob, per row: expired when the deadline passed, cancelled when a
    // confirm's order was refunded meanwhile, otherwise pending again with attempts reset.
    replay: `WITH picked AS (
      SELECT d.id,
        CASE
          WHEN d.deadline IS NOT NULL AND d.deadline < $1 THEN 'expired'
          WHEN d.kind = 'confirm' AND EXISTS (SELECT 1 FROM ${s}.jobs AS r WHERE r.order_id = d.order_id AND r.kind = 'refund') THEN 'cancelled'
          ELSE 'pending'
        END AS next_state
      FROM ${s}.jobs AS d
      WHERE d.state = 'dead' AND ($2::bigint[] IS NULL OR d.id = ANY($2::bigint[]))
      FOR UPDATE)
    UPDATE ${s}.jobs AS j SET
      state = p.next_state, updated_at = $1,
      attempts = CASE WHEN p.next_state = 'pending' THEN 0 ELSE j.attempts END,
      next_attempt_at = CASE WHEN p.next_state = 'pending' THEN $1 ELSE j.next_attempt_at END,
      last_error = CASE p.next_state
        WHEN 'expired' THEN left('deadline passed before replay; was: ' || coalesce(j.last_error, 'dead'), ${MAX_REASON_LENGTH})
        WHEN 'cancelled' THEN 'cancelled at replay: the order was refunded meanwhile'
        ELSE j.last_error END
    FROM picked AS p WHERE j.id = p.id
    RETURNING p.next_state, pg_notify($3, '') IS NULL AS notified`,
    purgeDead: `DELETE FROM ${s}.jobs WHERE state = 'dead' AND ($1::bigint[] IS NULL OR id = ANY($1::bigint[]))`,
  };
}

/** The statements of {@link jobStatements}. */
export type JobStatements = ReturnType<typeof jobStatements>;

/**
 * Every SQL statement of the outbox, built once per schema. Kept apart from the outbox so the statements
 * can be read (and their query plans tested) in one place. `$n` are bind parameters; the schema name
 * was validated and is quoted.
 */
import {
  ATTEMPT_HISTORY_LIMIT,
  MAX_REASON_LENGTH,
  QUIET_MAX_PENDING,
  QUIET_SCAN,
  QUIET_WITHIN_MS,
  SHADOW_RECORDED_REASON,
} from '@postback/core/store';
import { JOB_COLUMNS } from './rows.ts';

/**
 * The history after a transition: `attempt` (a jsonb object, already cut by core's `appendAttempt`)
 * appended to `history`, the oldest dropped beyond {@link ATTEMPT_HISTORY_LIMIT}; `history` as it was
 * when `attempt` is NULL. The trim only runs on a full history, and never reads it into JavaScript.
 */
function appendHistory(history: string, attempt: string): string {
  return `CASE
      WHEN ${attempt} IS NULL THEN ${history}
      WHEN coalesce(jsonb_array_length(${history}), 0) < ${ATTEMPT_HISTORY_LIMIT}
        THEN coalesce(${history}, '[]'::jsonb) || jsonb_build_array(${attempt})
      ELSE (SELECT jsonb_agg(t.e ORDER BY t.i) FROM jsonb_array_elements(${history} || jsonb_build_array(${attempt}))
              WITH ORDINALITY AS t(e, i) WHERE t.i > jsonb_array_length(${history}) + 1 - ${ATTEMPT_HISTORY_LIMIT})
    END`;
}

/** The status of the last recorded attempt: this transition's when it records one. */
function lastStatus(current: string, attempt: string, status: string): string {
  return `CASE WHEN ${attempt} IS NULL THEN ${current} ELSE ${status} END`;
}

/**
 * Most urgent first, as core's `byUrgency` (ascending puts jobs without a deadline last). Qualified, since
 * a bare `id` in ORDER BY would name the select list's `id::text` and sort as text.
 */
export const URGENCY_ORDER = 'ORDER BY j.deadline, j.created_at, j.id';

/** Job ids one prune batch covers (at most the rows it deletes): short statements, short locks. */
export const PRUNE_BATCH_SIZE = 1000;

/**
 * Core's `prunableAt(job) <= now` over a row of `j`: a final state, unchanged for `olderThanMs` (`$2` is
 * `now - olderThanMs`), past its own deadline, and for a confirm that was (or may have been) charged, past
 * its return window (`$3`) from the earlier of `delivered_at` and `maybe_applied_at` (LEAST skips NULLs).
 */
const PRUNABLE = `j.state IN ('delivered', 'cancelled', 'expired', 'unmatched')
      AND j.updated_at <= $2
      AND (j.deadline IS NULL OR j.deadline <= $1)
      AND (j.kind <> 'confirm' OR least(j.delivered_at, j.maybe_applied_at) IS NULL
           OR least(j.delivered_at, j.maybe_applied_at) + $3::bigint <= $1)`;

const WORKER_COLUMNS =
  'worker_id, at, state, paused_until, pause_reason, version, host, pid, paused_accounts';

/** Which criteria a `listJobs` filter has (their values are bound): one statement per shape. */
export interface JobListShape {
  states: number;
  kind: boolean;
  orderId: boolean;
  /** An account key (`''`: jobs without an account). */
  account: boolean;
  reason: boolean;
  status: boolean;
  deadlineBefore: boolean;
  updatedBefore: boolean;
}

/**
 * The `listJobs` statement of a filter's shape: its values bound in the order of the shape's fields, then
 * LIMIT and OFFSET. With a `reason`, only jobs with a last error come back (the RegExp is JavaScript's).
 */
export function listJobsStatement(s: string, shape: JobListShape): string {
  const where: string[] = [];
  let n = 0;
  const next = () => `$${++n}`;
  if (shape.states > 0) where.push(`state IN (${Array.from({ length: shape.states }, next).join(', ')})`);
  if (shape.kind) where.push(`kind = ${next()}`);
  if (shape.orderId) where.push(`order_id = ${next()}`);
  if (shape.account) where.push(`account = ${next()}`);
  if (shape.reason) where.push('last_error IS NOT NULL');
  if (shape.status) where.push(`last_status = ${next()}::integer`);
  if (shape.deadlineBefore) where.push(`deadline <= ${next()}::bigint`);
  if (shape.updatedBefore) where.push(`updated_at <= ${next()}::bigint`);
  const filter = where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`;
  return `SELECT ${JOB_COLUMNS} FROM ${s}.jobs AS j${filter} ${URGENCY_ORDER} LIMIT ${next()} OFFSET ${next()}`;
}

/**
 * A claim's job may be taken: a confirm always; a refund only once its order's confirm (same account and
 * order id) can no longer be sent — the confirm lookup is one probe of the order key; `due_at`-style
 * conditions already exclude refunds without a deadline.
 */
function sendable(s: string, c: string): string {
  return `(${c}.kind = 'confirm' OR coalesce((
          SELECT b.state NOT IN ('pending', 'inflight') FROM ${s}.jobs AS b
          WHERE b.order_id = ${c}.order_id AND b.account = ${c}.account AND b.kind = 'confirm'), true))`;
}

/**
 * The claim: core's order of `accounts.ts` in one UPDATE. $1 now, $2 limit, $3 leaseMs, $4 the excluded
 * account keys (text[]), $5 urgentWithinMs, $6 the cursor (the account key served last by this outbox's
 * previous claim, or NULL). Every tier locks with FOR UPDATE SKIP LOCKED, so concurrent claims never take
 * the same job, and reads an index of what it asks for, never the backlog, so a claim costs the same with
 * 20 accounts or 10,000:
 *
 * - `retaken`: inflight jobs whose lease ran out (`jobs_open`, which holds the few inflight jobs), by
 *   lease expiry;
 * - `urgent`: pending jobs whose deadline is within $5 (`jobs_urgent`, by deadline), nearest first;
 * - `young`, `heads`, then `quiet`: the accounts of the {@link QUIET_SCAN} newest pending jobs created
 *   within {@link QUIET_WITHIN_MS} (`jobs_open`, newest first: a backlog is consumed from its oldest end,
 *   so this end holds no entries of jobs already taken); of each, its first (at most
 *   {@link QUIET_MAX_PENDING} + 1) pending jobs in due order on `jobs_fair`, the first kept if the
 *   account holds no more than {@link QUIET_MAX_PENDING} (each step materialized, so the planner cannot
 *   start from the jobs and check every pending one); that job is taken if it is young too, never
 *   attempted, due and not urgent, oldest first. An account's first job is found through its newest, so
 *   the jobs that waited longest are not the ones the scan's bound leaves out;
 * - `walk`: the accounts with pending jobs in turn order — after the cursor, then from the first, up to
 *   the cursor's own — one probe of `jobs_fair` each (a loose index scan), read only as far as `turns`
 *   asks: a recursive query runs only as many steps as its reader fetches, and `turns` stops at its
 *   `LIMIT`, the accounts the claim still needs. Accounts whose jobs all wait for a retry are walked past
 *   (the one case where a claim reads more accounts than it serves: at worst all of them, never the jobs);
 * - `turns`: the walked accounts with a due job that is not urgent, not quiet-taken and not excluded;
 *   `taken` reads each one's first due jobs (LATERAL, at most `need - accounts + 1` each, so a claim locks
 *   little more than it takes), and the first `need` of them by (turn, place) are taken.
 *
 * `ord` lists the picked ids in claim order (and how many came before the turns): the UPDATE fetches them
 * by primary key (`= ANY` of that array, whatever the statistics say: a join would let the planner hash
 * the whole table), and RETURNING gives each job's place in that order, from which the outbox orders the
 * result and moves its cursor to the account of the last job taken in turns. Retaking an inflight job
 * whose lease ran out marks it maybe applied (core's claimJob); SET reads the row as it was before the
 * UPDATE.
 */
function claimStatement(s: string): string {
  const pendingSendable = `c.state = 'pending' AND c.deadline IS NOT NULL AND c.next_attempt_at <= $1`;
  const notUrgent = `c.deadline > $1::bigint + $5::bigint`;
  const notExcluded = (c: string) => `${c}.account <> ALL ($4::text[])`;
  // A filter on an array computed once, not an anti-join: as a join, Postgres's generic plan read every
  // due job of an account to build a hash (a claim of 16 cost 25 ms with 20 accounts of 10,000 jobs).
  const notQuiet = `c.id <> ALL ((SELECT coalesce(array_agg(q.id), '{}') FROM quiet AS q)::bigint[])`;
  // The first account after `after` with pending jobs (NULL past the last): one probe of `jobs_fair`.
  const nextAccount = (after: string) =>
    `(SELECT min(a.account) FROM ${s}.jobs AS a WHERE a.state = 'pending' AND a.deadline IS NOT NULL${after})`;
  return `WITH RECURSIVE
    retaken AS MATERIALIZED (
      SELECT c.id, c.lease_expires_at AS key FROM ${s}.jobs AS c
      WHERE c.state = 'inflight' AND c.lease_expires_at <= $1 AND ${notExcluded('c')} AND ${sendable(s, 'c')}
      ORDER BY c.lease_expires_at, c.id
      LIMIT $2
      FOR UPDATE SKIP LOCKED),
    urgent AS MATERIALIZED (
      SELECT c.id, c.deadline AS key FROM ${s}.jobs AS c
      WHERE ${pendingSendable} AND c.deadline <= $1::bigint + $5::bigint AND ${notExcluded('c')} AND ${sendable(s, 'c')}
      ORDER BY c.deadline, c.id
      LIMIT greatest($2 - (SELECT count(*) FROM retaken), 0)
      FOR UPDATE SKIP LOCKED),
    young AS MATERIALIZED (
      SELECT DISTINCT n.account FROM (
        SELECT y.account FROM ${s}.jobs AS y
        WHERE y.state = 'pending' AND y.created_at > $1::bigint - ${QUIET_WITHIN_MS}
        ORDER BY y.created_at DESC LIMIT ${QUIET_SCAN}) AS n),
    heads AS MATERIALIZED (
      SELECT firsts.ids[1] AS id FROM young AS n
      CROSS JOIN LATERAL (
        SELECT array_agg(f.id ORDER BY f.next_attempt_at, f.id) AS ids FROM (
          SELECT b.id, b.next_attempt_at FROM ${s}.jobs AS b
          WHERE b.account = n.account AND b.state = 'pending' AND b.deadline IS NOT NULL
          ORDER BY b.next_attempt_at, b.id LIMIT ${QUIET_MAX_PENDING + 1}) AS f) AS firsts
      WHERE cardinality(firsts.ids) <= ${QUIET_MAX_PENDING}),
    quiet AS MATERIALIZED (
      SELECT c.id, c.created_at AS key FROM heads AS h
      JOIN ${s}.jobs AS c ON c.id = h.id
      WHERE c.created_at > $1::bigint - ${QUIET_WITHIN_MS}
        AND ${pendingSendable} AND c.attempts = 0 AND ${notUrgent} AND ${notExcluded('c')} AND ${sendable(s, 'c')}
      ORDER BY c.created_at, c.id
      LIMIT greatest($2 - (SELECT count(*) FROM retaken) - (SELECT count(*) FROM urgent), 0)
      FOR UPDATE OF c SKIP LOCKED),
    need AS MATERIALIZED (
      SELECT greatest($2 - (SELECT count(*) FROM retaken) - (SELECT count(*) FROM urgent) - (SELECT count(*) FROM quiet), 0) AS n),
    walk (account, step, wrapped) AS (
      SELECT coalesce(x.after, ${nextAccount('')}), 1, x.after IS NULL
      FROM (SELECT ${nextAccount(' AND a.account > $6::text')} AS after) AS x
      WHERE (SELECT n FROM need) > 0
      UNION ALL
      SELECT coalesce(x.after, CASE WHEN NOT p.wrapped THEN ${nextAccount('')} END), p.step + 1, p.wrapped OR x.after IS NULL
      FROM walk AS p CROSS JOIN LATERAL (SELECT ${nextAccount(' AND a.account > p.account')} AS after) AS x
      WHERE p.account IS NOT NULL AND NOT (p.wrapped AND $6::text IS NOT NULL AND p.account >= $6::text)),
    turns AS MATERIALIZED (
      SELECT w.account, w.step AS place FROM walk AS w
      WHERE w.account IS NOT NULL AND NOT (w.wrapped AND $6::text IS NOT NULL AND w.account > $6::text)
        AND ${notExcluded('w')}
        AND EXISTS (SELECT 1 FROM ${s}.jobs AS c
                    WHERE c.account = w.account AND ${pendingSendable} AND ${notUrgent} AND ${notQuiet})
      LIMIT (SELECT n FROM need)),
    taken AS MATERIALIZED (
      SELECT x.id, t.place, row_number() OVER (PARTITION BY t.place ORDER BY x.next_attempt_at, x.id) AS turn
      FROM turns AS t CROSS JOIN LATERAL (
        SELECT c.id, c.next_attempt_at FROM ${s}.jobs AS c
        WHERE c.account = t.account AND ${pendingSendable} AND ${notUrgent} AND ${notQuiet} AND ${sendable(s, 'c')}
        ORDER BY c.next_attempt_at, c.id
        LIMIT greatest((SELECT n FROM need) - (SELECT count(*) FROM turns) + 1, 1)
        FOR UPDATE SKIP LOCKED) AS x),
    picked AS (
      SELECT r.id AS pick_id, 0 AS claim_tier, row_number() OVER (ORDER BY r.key, r.id) AS claim_rank FROM retaken AS r
      UNION ALL
      SELECT u.id, 1, row_number() OVER (ORDER BY u.key, u.id) FROM urgent AS u
      UNION ALL
      SELECT q.id, 2, row_number() OVER (ORDER BY q.key, q.id) FROM quiet AS q
      UNION ALL
      SELECT v.id, 3, v.rank FROM (
        SELECT x.id, row_number() OVER (ORDER BY x.turn, x.place) AS rank FROM taken AS x
      ) AS v WHERE v.rank <= (SELECT n FROM need)),
    ord AS MATERIALIZED (
      SELECT array_agg(p.pick_id ORDER BY p.claim_tier, p.claim_rank) AS ids,
        count(*) FILTER (WHERE p.claim_tier < 3) AS first
      FROM picked AS p)
    UPDATE ${s}.jobs AS j
    SET state = 'inflight', attempts = j.attempts + 1, updated_at = $1,
        lease_token = nextval('${s}.lease_tokens'), lease_expires_at = $1::bigint + $3::bigint,
        maybe_applied_at = coalesce(j.maybe_applied_at, CASE WHEN j.state = 'inflight' THEN j.updated_at END)
    WHERE j.id = ANY ((SELECT o.ids FROM ord AS o)::bigint[])
    RETURNING ${JOB_COLUMNS}, array_position((SELECT o.ids FROM ord AS o), j.id) AS claim_order,
      (SELECT o.first FROM ord AS o) AS claim_first`;
}

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
    // $9 is the account's key ('' for none): an order is its account and its order id.
    insertConfirm: `INSERT INTO ${s}.jobs (kind, order_id, account, state, attempts, created_at, updated_at, next_attempt_at, deadline, click_token, value_micros, clicked_at)
    VALUES ('confirm', $1, $9, 'pending', 0, $2, $2, $2, $3, $4, $5, $6)
    ON CONFLICT (account, order_id, kind) DO NOTHING
    RETURNING ${JOB_COLUMNS}, CASE WHEN $8::boolean THEN pg_notify($7, '') IS NULL END AS notified`,
    // created_at = next_attempt_at = $2 (the plan's now); updated_at is the plan's own (core's
    // refundAfterConfirm may take the later time of the confirm it follows).
    insertRefund: `INSERT INTO ${s}.jobs (kind, order_id, account, state, attempts, created_at, updated_at, next_attempt_at, deadline, campaign_id, campaign_from)
    VALUES ('refund', $1, $8, 'pending', 0, $2, $3, $2, $4, $5, $9)
    ON CONFLICT (account, order_id, kind) DO NOTHING
    RETURNING ${JOB_COLUMNS}, CASE WHEN $7::boolean THEN pg_notify($6, '') IS NULL END AS notified`,
    // planRefund's `updated`: a refund without a campaign is given one (a dead one is pending again). The
    // guard repeats the plan's conditions for a caller whose connection autocommits (no row lock held).
    updateRefund: `UPDATE ${s}.jobs SET campaign_id = $2, campaign_from = 'caller', updated_at = $3, state = $4, attempts = $5, next_attempt_at = $6,
      last_error = $7, lease_token = NULL, lease_expires_at = NULL
    WHERE id = $1 AND kind = 'refund' AND state IN ('pending', 'dead') AND campaign_id IS NULL
    RETURNING ${JOB_COLUMNS}, CASE WHEN $9::boolean THEN pg_notify($8, '') IS NULL END AS notified`,
    // Order lookups take the order id ($1) and the account's key ($2, '' for none).
    byOrderAndKind: `SELECT ${JOB_COLUMNS} FROM ${s}.jobs WHERE order_id = $1 AND account = $2 AND kind = $3`,
    lockOrder: `SELECT ${JOB_COLUMNS} FROM ${s}.jobs WHERE order_id = $1 AND account = $2 ORDER BY kind FOR UPDATE`,
    // Core's planRefund / planWithdraw cancel: a confirm pending, dead, or recorded in shadow mode.
    cancelConfirm: `UPDATE ${s}.jobs SET state = 'cancelled', updated_at = $2, last_error = $3, lease_token = NULL, lease_expires_at = NULL
    WHERE id = $1 AND (state IN ('pending', 'dead') OR (state = 'cancelled' AND last_error = '${SHADOW_RECORDED_REASON}'))
      AND maybe_applied_at IS NULL RETURNING ${JOB_COLUMNS}`,
    claim: claimStatement(s),
    completeMany: `UPDATE ${s}.jobs AS j SET state = 'delivered', updated_at = v.at, delivered_at = v.at, lease_token = NULL,
      lease_expires_at = NULL, last_error = NULL, held_at = NULL, held_campaign_id = NULL,
      campaign_id = CASE WHEN j.kind = 'confirm' THEN coalesce(v.campaign_id, j.campaign_id) ELSE j.campaign_id END,
      history = ${appendHistory('j.history', 'v.attempt::jsonb')},
      last_status = ${lastStatus('j.last_status', 'v.attempt', 'v.status::integer')}
    FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::bigint[])
      AS v(id, token, at, campaign_id, attempt, status)
    WHERE j.id = v.id AND j.state = 'inflight' AND j.lease_token = v.token
    RETURNING j.id::text AS id`,
    // Core's refundAfterConfirm for the pending refunds of the confirms $1 that ended: charged (delivered,
    // or a request may have reached the service) → the refund takes the confirm's campaign unless it has
    // one, and its deadline from that time ($2 = return window − safety margin), unless it has a deadline;
    // never charged → cancelled. Notifies when a refund became sendable.
    followConfirms: `UPDATE ${s}.jobs AS r SET
      state = CASE WHEN f.charged_at IS NULL THEN 'cancelled' ELSE r.state END,
      last_error = CASE WHEN f.charged_at IS NULL
        THEN 'cancelled: the confirmation ended ' || f.state || ' without being accepted, so nothing was charged'
        ELSE r.last_error END,
      campaign_id = CASE WHEN f.charged_at IS NULL THEN r.campaign_id ELSE coalesce(r.campaign_id, f.campaign_id) END,
      campaign_from = CASE WHEN f.charged_at IS NOT NULL AND r.campaign_id IS NULL AND f.campaign_id IS NOT NULL
        THEN 'answer' ELSE r.campaign_from END,
      deadline = CASE WHEN f.charged_at IS NULL THEN r.deadline ELSE f.charged_at + $2::bigint END,
      updated_at = greatest(r.updated_at, f.updated_at)
    FROM (
      SELECT c.order_id, c.account, c.state, c.campaign_id, c.updated_at,
        CASE WHEN c.state = 'delivered' THEN coalesce(c.delivered_at, c.updated_at) ELSE c.maybe_applied_at END AS charged_at
      FROM ${s}.jobs AS c
      WHERE c.id = ANY ($1::bigint[]) AND c.kind = 'confirm' AND c.state IN ('delivered', 'dead', 'expired', 'cancelled')
    ) AS f
    WHERE r.order_id = f.order_id AND r.account = f.account AND r.kind = 'refund' AND r.state = 'pending'
      AND (f.charged_at IS NULL OR r.deadline IS NULL)
    RETURNING CASE WHEN f.charged_at IS NOT NULL THEN pg_notify($3, '') IS NULL END AS notified`,
    // maybe_applied_at keeps its first time; $7/$6 (maybeApplied) sets it to this attempt's time if unset.
    // $10: held (core's RetryResult.hold; its attempt is then uncounted, $5 false), $11 its campaign.
    retry: `UPDATE ${s}.jobs SET state = 'pending', attempts = CASE WHEN $5 THEN attempts ELSE greatest(attempts - 1, 0) END,
      updated_at = $3, next_attempt_at = $4, last_error = $6, lease_token = NULL, lease_expires_at = NULL,
      maybe_applied_at = coalesce(maybe_applied_at, CASE WHEN $7::boolean THEN $3::bigint END),
      held_at = CASE WHEN $10::boolean THEN coalesce(held_at, $3::bigint) END,
      held_campaign_id = CASE WHEN $10::boolean THEN $11::text END,
      history = ${appendHistory('history', '$8::jsonb')}, last_status = ${lastStatus('last_status', '$8::jsonb', '$9::integer')}
    WHERE id = $1 AND state = 'inflight' AND lease_token = $2`,
    fail: `UPDATE ${s}.jobs SET state = $4, updated_at = $3, last_error = $5, lease_token = NULL, lease_expires_at = NULL,
      held_at = NULL, held_campaign_id = NULL,
      maybe_applied_at = CASE WHEN $9::boolean THEN NULL
        ELSE coalesce(maybe_applied_at, CASE WHEN $6::boolean THEN $3::bigint END) END,
      history = ${appendHistory('history', '$7::jsonb')}, last_status = ${lastStatus('last_status', '$7::jsonb', '$8::integer')}
    WHERE id = $1 AND state = 'inflight' AND lease_token = $2 RETURNING kind`,
    release: `UPDATE ${s}.jobs AS j SET state = 'pending', attempts = greatest(j.attempts - 1, 0), updated_at = $3, next_attempt_at = $3,
      lease_token = NULL, lease_expires_at = NULL
    FROM unnest($1::bigint[], $2::bigint[]) AS r(id, token)
    WHERE j.id = r.id AND j.state = 'inflight' AND j.lease_token = r.token
    RETURNING pg_notify($4, '') IS NULL AS notified`,
    // Core's releaseHeldJob on the pending held jobs of the selection ($2/$4 true: any account/campaign).
    releaseHeld: `UPDATE ${s}.jobs SET next_attempt_at = least(next_attempt_at, $1::bigint), updated_at = $1
    WHERE held_at IS NOT NULL AND state IN ('pending', 'inflight') AND state = 'pending'
      AND ($2::boolean OR account = $3) AND ($4::boolean OR held_campaign_id IS NOT DISTINCT FROM $5::text)`,
    notify: "SELECT pg_notify($1, '')",
    // Core's heldProblemsOf: one row per account and held campaign; the reason of the job held first.
    heldProblems: `SELECT account, held_campaign_id, count(*)::int AS n, coalesce(sum(value_micros), 0)::text AS value,
      min(held_at)::text AS since, min(deadline)::text AS earliest_deadline, (array_agg(last_error ORDER BY held_at, id))[1] AS reason
    FROM ${s}.jobs WHERE held_at IS NOT NULL AND state IN ('pending', 'inflight') GROUP BY account, held_campaign_id`,
    extendLease: `UPDATE ${s}.jobs SET lease_expires_at = $3::bigint + $4::bigint, updated_at = $3
    WHERE id = $1 AND state = 'inflight' AND lease_token = $2`,
    get: `SELECT ${JOB_COLUMNS} FROM ${s}.jobs WHERE id = $1`,
    getByOrder: `SELECT ${JOB_COLUMNS} FROM ${s}.jobs WHERE order_id = $1 AND account = $2 ORDER BY kind`,
    counts: `SELECT state, count(*)::int AS n FROM ${s}.jobs GROUP BY state`,
    oldestPending: `SELECT min(created_at) AS at FROM ${s}.jobs WHERE state = 'pending'`,
    // ORDER BY names the table's columns (`j.id`): a bare `id` is the select list's text.
    nearestDeadline: `SELECT j.id::text AS id, j.order_id, j.kind, j.deadline FROM ${s}.jobs AS j
    WHERE j.state IN ('pending', 'inflight') AND j.deadline IS NOT NULL ORDER BY j.deadline, j.id LIMIT 1`,
    listDead: `SELECT ${JOB_COLUMNS} FROM ${s}.jobs AS j WHERE j.state = 'dead' AND j.id > $1 ORDER BY j.id LIMIT $2`,
    // The same decision as core's replayJob, per row: expired when the deadline passed, cancelled when a
    // confirm's order was refunded meanwhile, otherwise pending again with attempts reset.
    replay: `WITH picked AS (
      SELECT d.id,
        CASE
          WHEN d.deadline IS NOT NULL AND d.deadline < $1 THEN 'expired'
          WHEN d.kind = 'confirm' AND EXISTS (SELECT 1 FROM ${s}.jobs AS r WHERE r.order_id = d.order_id AND r.account = d.account AND r.kind = 'refund') THEN 'cancelled'
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
    history: `SELECT history FROM ${s}.jobs WHERE id = $1`,
    // Open jobs by deadline in one read of the open backlog: `bucket` is how many of the ascending bounds
    // $1 (each `now + withinMs + 1`) are at or before the deadline, so a job counts in every bound from that
    // index on (deadline <= now + withinMs). Jobs past the widest bound ($2) are not read.
    deadlineRisk: `SELECT width_bucket(deadline, $1::bigint[]) AS bucket, count(*)::int AS n FROM ${s}.jobs
    WHERE state IN ('pending', 'inflight') AND deadline <= $2 GROUP BY 1`,
    listJobs: (shape: JobListShape) => listJobsStatement(s, shape),
    // Prune walks the primary key a range of PRUNE_BATCH_SIZE ids at a time ($4 < id <= $4 + size): each
    // batch reads its range only, locks only the rows it deletes, and skips those locked by others (an
    // app's refund holding its order: the next prune takes them); the DELETE checks the rule again on each
    // locked row, fetched by primary key. `next` is the lowest id past the range (null at the end), so
    // ranges emptied by earlier prunes cost nothing. $1 now, $2 now - olderThanMs, $3 returnWindowMs.
    prune: `WITH w AS (
      SELECT j.id FROM ${s}.jobs AS j WHERE j.id > $4::bigint AND j.id <= $4::bigint + ${PRUNE_BATCH_SIZE} AND ${PRUNABLE}
      FOR UPDATE SKIP LOCKED),
    gone AS (DELETE FROM ${s}.jobs AS j WHERE j.id = ANY (ARRAY(SELECT w.id FROM w)) AND ${PRUNABLE} RETURNING j.id)
    SELECT (SELECT count(*) FROM gone)::int AS deleted,
      (SELECT min(n.id) FROM ${s}.jobs AS n WHERE n.id > $4::bigint + ${PRUNE_BATCH_SIZE})::text AS next`,
    // Heart-beats of workers not seen for longer than the retention go with a prune.
    forgetWorkers: `DELETE FROM ${s}.workers WHERE at < $1`,
    beat: `INSERT INTO ${s}.workers (${WORKER_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)
    ON CONFLICT (worker_id) DO UPDATE SET at = excluded.at, state = excluded.state, paused_until = excluded.paused_until,
      pause_reason = excluded.pause_reason, version = excluded.version, host = excluded.host, pid = excluded.pid,
      paused_accounts = excluded.paused_accounts`,
    workers: `SELECT ${WORKER_COLUMNS} FROM ${s}.workers WHERE at >= $1 ORDER BY at DESC, worker_id`,
  };
}

/** The statements of {@link jobStatements}. */
export type JobStatements = ReturnType<typeof jobStatements>;

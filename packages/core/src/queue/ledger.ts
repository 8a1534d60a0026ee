/**
 * The ledger's rules, shared by every store: which transition writes a final-state row, how an appended
 * row is checked and redacted, and how a query is resolved and matched.
 */
import { escapeControls } from '../escape-controls.ts';
import type { EpochMs } from '../policy.ts';
import { redactSecrets } from './dispatcher/classify.ts';
import type { Job } from './job-types.ts';
import { truncateReason } from './jobs.ts';
import {
  DEFAULT_LEDGER_READ_LIMIT,
  LEDGER_ACTION_KINDS,
  LEDGER_DISPATCHER_ACTOR,
  LEDGER_FINAL_KINDS,
  type LedgerEntry,
  type LedgerInput,
  type LedgerKind,
  type LedgerQuery,
  MAX_LEDGER_READ_LIMIT,
} from './ledger-types.ts';
import { JobValidationError, validateOrderId } from './validation.ts';

const KINDS: ReadonlySet<string> = new Set([...LEDGER_ACTION_KINDS, ...LEDGER_FINAL_KINDS]);
const MAX_ACTOR_LENGTH = 200;

const isEpoch = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** A reason as it may be stored: secrets redacted, control characters escaped, cut to a stored reason's length. */
function safeReason(reason: string): string {
  return truncateReason(escapeControls(redactSecrets(reason)));
}

/**
 * Checks a row before it is appended (field named on error) and redacts its reason and actor.
 *
 * @example
 * ```ts
 * const row = checkLedgerInput({ actor: 'ana', kind: 'replay', at: now, jobId, orderId, account: null, valueMicros: null, reason: null });
 * ```
 */
export function checkLedgerInput(input: LedgerInput): LedgerInput {
  const given = input as Partial<Record<keyof LedgerInput, unknown>>;
  if (typeof given !== 'object' || given === null)
    throw new JobValidationError('ledger', 'must be an object');
  if (typeof given.actor !== 'string' || given.actor.trim() === '' || given.actor.length > MAX_ACTOR_LENGTH)
    throw new JobValidationError(
      'ledger.actor',
      `must be a non-empty string of at most ${MAX_ACTOR_LENGTH} characters`,
    );
  if (typeof given.kind !== 'string' || !KINDS.has(given.kind))
    throw new JobValidationError('ledger.kind', `must be one of ${[...KINDS].join(', ')}`);
  if (!isEpoch(given.at)) throw new JobValidationError('ledger.at', 'must be epoch milliseconds');
  if (given.jobId !== null && (typeof given.jobId !== 'string' || given.jobId === ''))
    throw new JobValidationError('ledger.jobId', 'must be a non-empty string or null');
  const orderId = validateOrderId(given.orderId, 'ledger.orderId');
  if (given.account !== null && typeof given.account !== 'string')
    throw new JobValidationError('ledger.account', 'must be a string or null');
  if (
    given.valueMicros !== null &&
    !(Number.isSafeInteger(given.valueMicros) && (given.valueMicros as number) >= 0)
  )
    throw new JobValidationError('ledger.valueMicros', 'must be a non-negative integer (micros) or null');
  if (given.reason !== null && typeof given.reason !== 'string')
    throw new JobValidationError('ledger.reason', 'must be a string or null');
  return {
    actor: safeReason(given.actor),
    kind: given.kind as LedgerKind,
    at: given.at,
    jobId: given.jobId as string | null,
    orderId,
    account: given.account as string | null,
    valueMicros: given.valueMicros as number | null,
    reason: given.reason === null ? null : safeReason(given.reason as string),
  };
}

/**
 * The final-state row a transition from `before` to `after` writes, or null when the job did not enter a
 * final money state (`applied`/`reversed` for a delivered confirm/refund, `expired`, `unmatched`, `dead`).
 * Stores call it inside the transition, so a transition that lost its lease (a raced or retried one)
 * writes nothing.
 *
 * @example
 * ```ts
 * const row = finalLedgerRow(stored, next, now);
 * if (row !== null) insertLedger(row);
 * ```
 */
export function finalLedgerRow(before: Job, after: Job, at: EpochMs): LedgerInput | null {
  if (before.state === after.state) return null;
  let kind: LedgerKind;
  if (after.state === 'delivered') kind = after.kind === 'confirm' ? 'applied' : 'reversed';
  else if (after.state === 'expired' || after.state === 'unmatched' || after.state === 'dead')
    kind = after.state;
  else return null;
  const reason = after.state === 'delivered' || after.lastError === null ? null : safeReason(after.lastError);
  return jobLedgerRow(after, { actor: LEDGER_DISPATCHER_ACTOR, kind, at, reason });
}

/**
 * The ledger row of what `actor` did to `job` (or what it became): its job, order, account and value (a
 * confirmation's; null for a reversal). Operator tools (CLI, dashboard) append it for their actions.
 *
 * @example
 * ```ts
 * await outbox.appendLedger(jobLedgerRow(job, { actor: 'ana', kind: 'replay', at: Date.now(), reason: null }));
 * ```
 */
export function jobLedgerRow(
  job: Job,
  row: { actor: string; kind: LedgerKind; at: EpochMs; reason: string | null },
): LedgerInput {
  return {
    ...row,
    jobId: job.id,
    orderId: job.orderId,
    account: job.account,
    valueMicros: job.kind === 'confirm' ? job.valueMicros : null,
  };
}

/** A {@link LedgerQuery} with its limit resolved and checked. */
export interface ResolvedLedgerQuery {
  since: EpochMs | null;
  orderId: string | null;
  account: string | null;
  limit: number;
}

/**
 * Checks and resolves a ledger query (field named on error).
 *
 * @example
 * ```ts
 * resolveLedgerQuery({ orderId: 'ord_1' }); // { since: null, orderId: 'ord_1', account: null, limit: 1000 }
 * ```
 */
export function resolveLedgerQuery(query: LedgerQuery = {}): ResolvedLedgerQuery {
  const { since, orderId, account, limit = DEFAULT_LEDGER_READ_LIMIT } = query;
  if (since !== undefined && !isEpoch(since))
    throw new JobValidationError('since', 'must be epoch milliseconds');
  if (account !== undefined && typeof account !== 'string')
    throw new JobValidationError('account', 'must be a string');
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LEDGER_READ_LIMIT)
    throw new JobValidationError('limit', `must be an integer from 1 to ${MAX_LEDGER_READ_LIMIT}`);
  return {
    since: since ?? null,
    orderId: orderId === undefined ? null : validateOrderId(orderId),
    account: account ?? null,
    limit,
  };
}

/**
 * Whether a stored row matches a resolved query (for stores that filter in memory).
 *
 * @example
 * ```ts
 * rows.filter((row) => matchesLedgerQuery(row, resolveLedgerQuery(query)));
 * ```
 */
export function matchesLedgerQuery(row: LedgerEntry, query: ResolvedLedgerQuery): boolean {
  return (
    (query.since === null || row.at >= query.since) &&
    (query.orderId === null || row.orderId === query.orderId) &&
    (query.account === null || row.account === query.account)
  );
}

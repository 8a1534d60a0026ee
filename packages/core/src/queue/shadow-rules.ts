/**
 * Shadow mode's rules, as pure functions every store applies (the contract is in `shadow-types.ts`):
 * which settings cover a job, what a job recorded in shadow mode looks like (`cancelled` with
 * `SHADOW_RECORDED_REASON` of `shadow-mark.ts`: nothing reached the service, nothing was charged, and
 * nothing sends it unless shadow mode ends with a decision to), what ending shadow mode decides and does to
 * each recorded job, and the checks of what the store contract's shadow calls are given.
 */
import type { EpochMs } from '../policy.ts';
import { accountKey } from './accounts.ts';
import { checkClaimedJob, checkEpoch } from './call-checks.ts';
import type { Job } from './job-types.ts';
import { truncateReason } from './jobs.ts';
import { isShadowRecorded, SHADOW_DROPPED_PREFIX, SHADOW_RECORDED_REASON } from './shadow-mark.ts';
import type {
  ShadowEndOptions,
  ShadowScope,
  ShadowSetting,
  SpendReading,
  SwitchDecision,
} from './shadow-types.ts';
import { heldDecisionFor } from './switch-rules.ts';
import { JobValidationError, validateAccount, validateCampaignId, validateMicros } from './validation.ts';

/**
 * Checks a scope given to `OutboxShadow.start` or `end`. Throws `JobValidationError` naming the field.
 *
 * @example
 * ```ts
 * checkShadowScope({ account: 'shop-7' }); // { account: 'shop-7' }
 * ```
 */
export function checkShadowScope(scope: unknown): ShadowScope {
  if (typeof scope !== 'object' || scope === null || Array.isArray(scope))
    throw new JobValidationError('scope', 'must be { all: true } or { account }');
  const keys = Object.keys(scope);
  if ('all' in scope) {
    if (scope.all !== true || keys.length !== 1)
      throw new JobValidationError('scope', 'must be { all: true } or { account }, not both');
    return { all: true };
  }
  if (!('account' in scope) || keys.length !== 1)
    throw new JobValidationError('scope', 'must be { all: true } or { account }');
  return { account: validateAccount(scope.account, 'scope.account') };
}

/** The key a store keeps a scope under: `*` for the whole outbox, `=` and the account key for one account. */
export function shadowScopeKey(scope: ShadowScope): string {
  return 'all' in scope ? '*' : `=${accountKey(scope.account)}`;
}

/** The setting a scope is kept as, from `since`. */
export function shadowSettingOf(scope: ShadowScope, since: EpochMs): ShadowSetting {
  return 'all' in scope
    ? { scope: 'all', account: null, since }
    : { scope: 'account', account: scope.account, since };
}

/**
 * Whether `settings` put the jobs of `account` in shadow mode.
 *
 * @example
 * ```ts
 * coversAccount(await outbox.shadow.settings(), job.account);
 * ```
 */
export function coversAccount(settings: readonly ShadowSetting[], account: string | null): boolean {
  return settings.some((s) => s.scope === 'all' || s.account === account);
}

/**
 * Whether a claimed job would be sent at `now` (so shadow mode records it): its deadline is known and has
 * not passed, and a reversal knows its campaign. Any other job takes the path it takes outside shadow
 * mode, where nothing is sent either (it expires, waits or is dead-lettered, naming why).
 */
export function isShadowable(job: Job, now: EpochMs): boolean {
  if (job.deadline === null || now > job.deadline) return false;
  return job.kind === 'confirm' || job.campaignId !== null;
}

/**
 * The claimed job recorded in shadow mode at `now`: `cancelled` with {@link SHADOW_RECORDED_REASON}, its
 * attempt not counted (nothing was sent), not maybe applied.
 *
 * @example
 * ```ts
 * if (holdsLease(stored, claimed)) await db.update(shadowRecordJob(stored, now));
 * ```
 */
export function shadowRecordJob<J extends Job>(stored: J, now: EpochMs): J {
  return {
    ...stored,
    state: 'cancelled',
    attempts: Math.max(0, stored.attempts - 1),
    updatedAt: now,
    lease: null,
    lastError: SHADOW_RECORDED_REASON,
    heldAt: null,
    heldCampaignId: null,
  };
}

/**
 * The decision on one recorded (or held) order at a switch to s2s: `send` when it was created at or after
 * `sendCreatedFrom` (the moment the pixel stopped billing), else `drop` (the pixel billed it). With
 * `sendCreatedFrom` null, every order is dropped.
 *
 * @example
 * ```ts
 * decideRecorded(job, { sendCreatedFrom: Date.parse('2026-11-03T00:00:00Z') }); // 'send' | 'drop'
 * ```
 */
export function decideRecorded(
  job: Pick<Job, 'createdAt'>,
  options: { sendCreatedFrom: EpochMs | null },
): SwitchDecision {
  return options.sendCreatedFrom !== null && job.createdAt >= options.sendCreatedFrom ? 'send' : 'drop';
}

/**
 * The decision `OutboxShadow.end` takes for one recorded job: an order by {@link decideRecorded}; a
 * reversal is always sent (inside its window). A reversal is recorded only for an order charged through
 * s2s (or confirmed elsewhere): the refund of an order recorded in shadow mode cancels that order instead.
 * The pixel cannot have billed a reversal, and dropping it would leave a returned order charged.
 *
 * @example
 * ```ts
 * decideAtShadowEnd(job, { sendCreatedFrom: null }); // 'drop' for an order, 'send' for a reversal
 * ```
 */
export function decideAtShadowEnd(
  job: Pick<Job, 'kind' | 'createdAt'>,
  options: { sendCreatedFrom: EpochMs | null },
): SwitchDecision {
  return heldDecisionFor(job, decideRecorded(job, options));
}

/**
 * A recorded job once shadow mode ends, by `decision`:
 * - `send`: `pending`, due now, attempts reset, unless its deadline has passed (`expired`: never sent late)
 *   or it is a confirm whose order has a refund (`cancelled`: a returned order is not charged);
 * - `drop`: `cancelled`, naming why it was not sent.
 * Returns the job unchanged when it is not shadow-recorded.
 *
 * @example
 * ```ts
 * await db.update(endShadowJob(job, 'drop', { now, orderHasRefund: false }));
 * ```
 */
export function endShadowJob<J extends Job>(
  stored: J,
  decision: SwitchDecision,
  options: { now: EpochMs; orderHasRefund: boolean; sendCreatedFrom?: EpochMs | null },
): J {
  if (!isShadowRecorded(stored)) return stored;
  const { now } = options;
  const ended = (state: 'cancelled' | 'expired', lastError: string): J => ({
    ...stored,
    state,
    updatedAt: now,
    lastError: truncateReason(lastError),
  });
  if (decision === 'drop') {
    const from = options.sendCreatedFrom ?? null;
    const before = from === null ? '' : ` created before ${new Date(from).toISOString()},`;
    return ended('cancelled', `${SHADOW_DROPPED_PREFIX}:${before} billed by the pixel`);
  }
  if (stored.deadline === null || stored.deadline < now)
    return ended('expired', 'shadow end: its deadline passed while it was recorded in shadow mode; not sent');
  if (stored.kind === 'confirm' && options.orderHasRefund)
    return ended(
      'cancelled',
      'shadow end: the order was refunded while it was recorded in shadow mode; not sent',
    );
  return { ...stored, state: 'pending', attempts: 0, updatedAt: now, nextAttemptAt: now, lastError: null };
}

/**
 * Checks what `OutboxShadow.record` is given: a claimed job and the time.
 *
 * @example
 * ```ts
 * const { job, now } = checkShadowRecord(claimed, { now: Date.now() });
 * ```
 */
export function checkShadowRecord(job: unknown, options: { now: EpochMs }): { job: Job; now: EpochMs } {
  return { job: checkClaimedJob(job), now: checkEpoch(options?.now, 'now') };
}

/**
 * Checks what `OutboxShadow.end` is given. Throws `JobValidationError` or a TypeError naming the field.
 *
 * @example
 * ```ts
 * checkShadowEnd({ all: true }, { now, sendCreatedFrom: null });
 * ```
 */
export function checkShadowEnd(
  scope: unknown,
  options: ShadowEndOptions,
): { scope: ShadowScope; now: EpochMs; sendCreatedFrom: EpochMs | null } {
  const from = options?.sendCreatedFrom;
  return {
    scope: checkShadowScope(scope),
    now: checkEpoch(options?.now, 'now'),
    sendCreatedFrom: from === null ? null : checkEpoch(from, 'sendCreatedFrom'),
  };
}

/**
 * Checks a spend reading: an account, a time, and campaigns of the form `cmp_<id>` with non-negative
 * integer micros. Throws `JobValidationError` naming the field.
 *
 * @example
 * ```ts
 * checkSpendReading({ account: null, at: now, campaigns: [{ campaignId: 'cmp_1', spendMicros: 3_000_000 }] });
 * ```
 */
export function checkSpendReading(reading: unknown): SpendReading {
  if (typeof reading !== 'object' || reading === null)
    throw new JobValidationError('reading', 'must be { account, at, campaigns }');
  const { account, at, campaigns } = reading as Partial<SpendReading>;
  if (!Array.isArray(campaigns)) throw new JobValidationError('campaigns', 'must be an array');
  return {
    account: validateAccount(account),
    at: checkEpoch(at, 'at'),
    campaigns: campaigns.map((c: { campaignId?: unknown; spendMicros?: unknown }, i) => ({
      campaignId: validateCampaignId(c?.campaignId, `campaigns[${i}].campaignId`),
      spendMicros: validateMicros(c?.spendMicros, `campaigns[${i}].spendMicros`),
    })),
  };
}

/**
 * The jobs `OutboxShadow.end` decides once `remaining` settings are left: the shadow-recorded jobs no
 * remaining setting covers.
 */
export function decidedAtEnd(job: Job, remaining: readonly ShadowSetting[]): boolean {
  return isShadowRecorded(job) && !coversAccount(remaining, job.account);
}

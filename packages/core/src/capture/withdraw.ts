/**
 * Consent withdrawn after the fact: `withdrawConsent` forgets the shopper's click in the click store and
 * withdraws the confirmations of their orders from the outbox (`Outbox.withdraw`): those none of whose
 * requests may have reached the service are cancelled and never sent; those that may have charged are
 * left as they are and named in the result, for the shop to decide (a `refund` reverses a charge).
 */
import type { ClickStore } from '../click.ts';
import type { ConfirmJob } from '../queue/job-types.ts';
import type { Outbox, WithdrawOutcome } from '../queue/outbox-types.ts';
import {
  JobValidationError,
  validateAccount,
  validateClickToken,
  validateOrderId,
} from '../queue/validation.ts';

/** Page size of the scan of open confirmations for a click token. */
const TOKEN_SCAN_PAGE = 500;

/**
 * Whose consent was withdrawn; give at least one of `key`, `token`, `orderId`:
 * - `key`: the visitor or customer id capture keeps the click under in the click store (capture's `key`):
 *   that click is deleted.
 * - `orderId` (and `account`, for a shop of a platform): that order's confirmation is withdrawn.
 * - `token`: the shopper's own click token — from their signed cookie or the click store
 *   (`keptClickOf(req.postback)`), never from a URL parameter anyone can write: every confirmation
 *   attributed to it that has not been sent (`pending`, `dead`) **in `account`** (none: jobs without an
 *   account) is withdrawn. The outbox is searched page by page for it (`listJobs`), which reads its open
 *   jobs: give `orderId` when the shop has it.
 */
export interface ConsentWithdrawal {
  key?: string;
  token?: string;
  orderId?: string;
  /**
   * The account the withdrawal acts in: of `orderId`'s confirmation, and the only one searched for
   * `token`'s. @defaultValue none (null): jobs without an account
   */
  account?: string | null;
}

/** Where the click and the confirmations are kept; give the ones the withdrawal needs. */
export interface ConsentStores {
  /** The capture's click store (needed with `key`). */
  clickStore?: Pick<ClickStore, 'delete'>;
  /** The outbox confirmations go to (needed with `orderId` or `token`; `listJobs` only with `token`). */
  outbox?: Pick<Outbox, 'withdraw'> & Partial<Pick<Outbox, 'listJobs'>>;
}

/** What {@link withdrawConsent} did. */
export interface WithdrawConsentResult {
  /** The click store's click of `key` was deleted (false when no `key` was given). */
  clickDeleted: boolean;
  /** The outbox's answer for each order withdrawn (see `WithdrawOutcome`), in order. */
  orders: WithdrawOutcome[];
  /**
   * Confirmations left as they were because the service may have charged them (`may-have-charged`):
   * delivered, being sent, or sent without a clear answer. Never "never charged"; a `refund` reverses one.
   */
  mayHaveCharged: ConfirmJob[];
}

/**
 * Withdraws a shopper's consent after the fact: deletes their click from the click store and cancels the
 * confirmations not yet sent of their orders (or of their click token), so nothing more is sent for them.
 * A confirmation that may have reached the service is left as it is and listed in `mayHaveCharged`.
 *
 * @throws {JobValidationError} naming the field: a malformed `key`, `token`, `orderId` or `account`, none
 *   of `key`, `token`, `orderId` given (`input`), or the store a field needs missing (`clickStore`,
 *   `outbox`). The outbox's own errors (an SQS outbox cannot withdraw) pass through.
 * @example
 * ```ts
 * const result = await withdrawConsent(
 *   { clickStore, outbox },
 *   { key: customer.id, orderId: order.id },
 * );
 * if (result.mayHaveCharged.length > 0) console.log('already sent:', result.mayHaveCharged.map((j) => j.orderId));
 * ```
 */
export async function withdrawConsent(
  stores: ConsentStores,
  withdrawal: ConsentWithdrawal,
): Promise<WithdrawConsentResult> {
  if (typeof withdrawal !== 'object' || withdrawal === null)
    throw new JobValidationError('input', 'must be an object { key?, token?, orderId?, account? }');
  const { key, token, orderId, account } = withdrawal;
  if (key === undefined && token === undefined && orderId === undefined)
    throw new JobValidationError('input', 'needs at least one of key, token and orderId');
  if (key !== undefined && (typeof key !== 'string' || key === ''))
    throw new JobValidationError('key', 'must be a non-empty string');
  if (token !== undefined) validateClickToken(token, 'token');
  const scope = validateAccount(account);
  const order = orderId === undefined ? null : { orderId: validateOrderId(orderId), account: scope };
  const { clickStore, outbox } = stores ?? {};
  if (key !== undefined && clickStore === undefined)
    throw new JobValidationError('clickStore', 'is required to delete the click of a key');
  if ((order !== null || token !== undefined) && outbox === undefined)
    throw new JobValidationError('outbox', 'is required to withdraw confirmations');

  let clickDeleted = false;
  if (key !== undefined && clickStore !== undefined) {
    await clickStore.delete(key);
    clickDeleted = true;
  }
  const targets = order === null ? [] : [order];
  if (token !== undefined && outbox !== undefined)
    targets.push(...(await ordersOfToken(outbox, token, scope)));
  const orders: WithdrawOutcome[] = [];
  const seen = new Set<string>();
  for (const target of targets) {
    const id = `${target.account ?? ''}\u0001${target.orderId}`;
    if (seen.has(id) || outbox === undefined) continue;
    seen.add(id);
    orders.push(await outbox.withdraw(target));
  }
  const mayHaveCharged = orders.flatMap((o) => (o.outcome === 'may-have-charged' ? [o.job] : []));
  return { clickDeleted, orders, mayHaveCharged };
}

/**
 * The orders of `account` whose confirmation not yet sent (`pending`, `dead`) carries `token`: all pages
 * first. Another account's orders are never touched, whatever the store's filter does.
 */
async function ordersOfToken(
  outbox: NonNullable<ConsentStores['outbox']>,
  token: string,
  account: string | null,
): Promise<{ orderId: string; account: string | null }[]> {
  if (typeof outbox.listJobs !== 'function')
    throw new JobValidationError('outbox', 'needs listJobs to find the confirmations of a click token');
  const found: { orderId: string; account: string | null }[] = [];
  for (let offset = 0; ; offset += TOKEN_SCAN_PAGE) {
    const page = await outbox.listJobs({
      states: ['pending', 'dead'],
      kind: 'confirm',
      account,
      limit: TOKEN_SCAN_PAGE,
      offset,
    });
    for (const job of page)
      if (job.kind === 'confirm' && job.clickToken === token && job.account === account)
        found.push({ orderId: job.orderId, account: job.account });
    if (page.length < TOKEN_SCAN_PAGE) return found;
  }
}

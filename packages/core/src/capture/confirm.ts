/**
 * Attaching the click to an order: the one step adapters expose as `confirmOrder(req, outbox, order)`.
 */
import type { ClickStamp } from '../click.ts';
import type { ConfirmJob } from '../queue/job-types.ts';
import type { EnqueueResult, Outbox } from '../queue/outbox-types.ts';
import type { ClickContext } from './engine.ts';
import { CaptureError } from './errors.ts';

/** The order to confirm: everything but the click, which comes from the request. */
export interface OrderToConfirm {
  orderId: string;
  /** Order value in integer micros. */
  valueMicros: number;
  /**
   * The advertiser account the order belongs to (a shop id of a platform hosting many shops; never a key):
   * the worker sends it with that account's key. @defaultValue none (the worker's single key)
   */
  account?: string;
}

/**
 * Whether a confirmation was enqueued. `enqueued: false` says why, in `reason`:
 * - `no-click`: the request had no click (the order did not come from an ad);
 * - `no-consent`: the request's `consent` hook refused (or threw): no order is confirmed from its click,
 *   whether the click came from the URL, a cookie set earlier or the store.
 *
 * With `enqueued: true`, `result.created` is false when the order was already there.
 */
export type ConfirmOrderResult =
  | { enqueued: false; click: null; reason: 'no-click' | 'no-consent' }
  | { enqueued: true; click: ClickStamp; result: EnqueueResult<ConfirmJob> };

/**
 * Enqueues the confirmation of an order if the request has a click and its consent allows it (see
 * {@link ClickContext.consent}). `outbox` is anything with the Outbox's `confirm` (e.g. a transactional
 * outbox bound to the caller's transaction).
 *
 * @param where how the app reaches the click context, for the error when the middleware did not run.
 * @throws {CaptureError} reason `not-installed` when `postback` is undefined; `JobValidationError` (from the
 *   outbox) for a bad `orderId` or `valueMicros`.
 * @example
 * ```ts
 * const outcome = await confirmClickOrder(postback, outbox, { orderId: 'ord_1', valueMicros: 12_340_000 });
 * if (outcome.enqueued) console.log('confirmation job', outcome.result.job.id);
 * else console.log('not confirmed:', outcome.reason); // 'no-click' | 'no-consent'
 * ```
 */
export async function confirmClickOrder(
  postback: ClickContext | undefined,
  outbox: Pick<Outbox, 'confirm'>,
  order: OrderToConfirm,
  where = 'the click context',
): Promise<ConfirmOrderResult> {
  if (postback === undefined || typeof postback.click !== 'function') {
    throw new CaptureError(
      'not-installed',
      `${where} is missing: install the postback capture middleware before this route`,
    );
  }
  // Asked before the click is read: a refused consent costs no cookie verification or store read.
  if (typeof postback.consent === 'function' && (await postback.consent()) !== true)
    return { enqueued: false, click: null, reason: 'no-consent' };
  const click = await postback.click();
  if (click === null) return { enqueued: false, click: null, reason: 'no-click' };
  const { orderId, valueMicros, account } = order;
  const result = await outbox.confirm({
    orderId,
    valueMicros,
    click,
    ...(account === undefined ? {} : { account }),
  });
  return { enqueued: true, click, result };
}

/**
 * Refunds on SQS, by core's rules (`planRefund` when one is asked for, `refundAfterConfirm` when it comes
 * up in the queue). SQS differs only where it cannot take a message out of a queue: a confirmation still
 * in the queue (or dead in the dead-letter queue) is not cancelled; the refund waits behind it in its FIFO
 * group and is cancelled by the worker if the confirmation ends never charged.
 */
import { randomUUID } from 'node:crypto';
import {
  type ConfirmJob,
  type EpochMs,
  JobValidationError,
  type RefundJob,
  type RefundOutcome,
} from '@postback/core';
import { planRefund, refundAfterConfirm, refundDeadlineOf, validateRefundInput } from '@postback/core/store';
import { giveBack, scanDeadLetters } from './dead-letter-queue.ts';
import { SqsOutboxError } from './errors.ts';
import { messageFor, type SqsOutboxContext } from './outbox-context.ts';
import { sendMessage } from './producer.ts';
import { deleteMessages } from './sqs-calls.ts';

/**
 * What a received refund does, by core's `refundAfterConfirm` applied to the ledger's record of its
 * confirmation (FIFO order means that confirmation has left the queue): cancelled when it ended never
 * charged; else it takes the campaign and deadline from it. A refund still without a deadline has a
 * confirmation that left the queue with no outcome recorded (a ledger write lost in a crash, or no
 * record): it may have been charged, so it is sent, bounded by the latest the return window can end.
 * A refund with no campaign known is handed over as is: the Dispatcher dead-letters it, naming what to
 * supply (`refund({ orderId, campaignId })` then sends it again).
 */
export function followConfirm(
  context: SqsOutboxContext,
  refund: RefundJob,
  confirm: ConfirmJob | null,
  at: EpochMs,
): RefundJob {
  const next = confirm === null ? refund : refundAfterConfirm(refund, confirm, context.policy);
  if (next.state === 'cancelled' || next.deadline !== null) return next;
  const fromAnswer = next.campaignId === null && (confirm?.campaignId ?? null) !== null;
  return {
    ...next,
    campaignId: next.campaignId ?? confirm?.campaignId ?? null,
    campaignFrom: fromAnswer ? 'answer' : next.campaignFrom,
    deadline: refundDeadlineOf(at, context.policy),
  };
}

/**
 * Stores the campaign a refund was given after it was enqueued without one (core's `updated`). A refund
 * still in the queue cannot be rewritten: the ledger keeps the campaign and the worker takes it from
 * there when the refund comes up. A dead one (dead-lettered for want of a campaign) is sent again with
 * it, and its dead-letter record removed; if that record cannot be found (purged, or beyond
 * `deadLetterScanLimit`) it is sent all the same: the ledger says it is owed.
 */
async function supplyCampaign(
  context: SqsOutboxContext,
  updated: RefundJob,
  before: RefundJob,
): Promise<void> {
  if (before.state !== 'dead') {
    await context.ledger?.put(updated);
    return;
  }
  const { url, letters } = await scanDeadLetters(context);
  const letter = letters.find((l) => l.job?.id === before.id && l.state === 'dead');
  try {
    // Its own deduplication id: the refund's usual one may be within SQS's 5-minute interval.
    const deduplicationId = `u:${letter?.messageId ?? randomUUID()}`;
    await sendMessage(
      context.client,
      context.queueUrl,
      messageFor(context, updated, deduplicationId, letter?.history),
    );
    await context.ledger?.put(updated);
    if (letter !== undefined) await deleteMessages(context.client, url, [letter.receiptHandle]);
  } finally {
    await giveBack(
      context,
      url,
      letters.filter((l) => l !== letter),
    );
  }
}

/**
 * The Outbox's `refund()` on SQS: needs a FIFO queue, and a `campaignId` unless an order ledger is
 * configured (SQS cannot look the confirmation up).
 *
 * @example
 * ```ts
 * const outcome = await refundOnSqs(context, { orderId: 'A-1001' });
 * ```
 */
export async function refundOnSqs(context: SqsOutboxContext, input: unknown): Promise<RefundOutcome> {
  const { ledger, policy } = context;
  if (!context.fifo) {
    throw new SqsOutboxError(
      'configuration',
      'refunds need a FIFO queue: a standard SQS queue does not keep order, so a reversal could overtake its confirmation',
    );
  }
  const checked = validateRefundInput(input);
  if (ledger === undefined && checked.campaignId === undefined) {
    throw new JobValidationError(
      'campaignId',
      'is required on SQS unless an order ledger is configured: SQS cannot look up the confirmation',
    );
  }
  const at = context.now();
  const id = randomUUID();
  const { confirm, refund: existing } =
    ledger === undefined
      ? { confirm: null, refund: null }
      : await ledger.get(checked.orderId, checked.account ?? null);
  let planned = planRefund(checked, { now: at, id, policy, confirm, refund: existing });
  if (planned.outcome === 'cancelled') {
    // The confirmation is still in the queue (or dead in the DLQ): SQS cannot take it out, so the refund is
    // planned as one behind a confirmation still under way. It waits in its FIFO group; the worker applies
    // core's refundAfterConfirm to the confirmation's recorded outcome when the refund comes up (cancelled
    // if it was never charged).
    const underWay: ConfirmJob = { ...planned.job, state: 'inflight' };
    planned = planRefund(checked, { now: at, id, policy, confirm: underWay, refund: null });
  }
  switch (planned.outcome) {
    case 'updated':
      await supplyCampaign(context, planned.job, existing ?? planned.job);
      return planned;
    case 'enqueued':
      await sendMessage(context.client, context.queueUrl, messageFor(context, planned.job));
      await ledger?.put(planned.job);
      return planned;
    default:
      return planned;
  }
}

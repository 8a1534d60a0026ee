/**
 * `postback refund`: reverse one order from the shell. Cancels a confirmation that was not sent yet, or
 * enqueues a reversal that the worker sends once the confirmation is delivered.
 */
import type { RefundOutcome } from '@postback/core';
import { backendFlags, EXIT, UsageError, validationProblem } from '../args.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { jobView, jsonText, orderText, text } from '../format.ts';
import { refundSpec } from '../specs/refund.ts';

const FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  orderId: '--order-id',
  campaignId: '--campaign-id',
  account: '--account',
};

function describeOutcome(result: RefundOutcome): string {
  const { job } = result;
  const order = orderText(job);
  switch (result.outcome) {
    case 'enqueued':
      return `${text`created refund job ${job.id} for `}${order}`;
    case 'duplicate':
      return `${order}${text` already has a refund job ${job.id} (${job.state}); nothing changed`}`;
    case 'cancelled':
      return `${text`the confirmation of `}${order}${text` was never charged (not sent, or refused by the service for good): cancelled it (${job.id}); nothing to reverse`}`;
    case 'not-charged':
      return `${text`the confirmation of `}${order}${text` ended ${job.state} without a charge; nothing to reverse`}`;
    case 'updated':
      return `${text`refund job ${job.id} of `}${order}${text` now reverses in campaign ${job.campaignId} (${job.state})`}`;
    case 'window-closed':
      return `${text`the configured return window of `}${order}${text` has closed: nothing was enqueued and nothing will be sent`}`;
  }
}

/**
 * Builds the `refund` command with its dependencies.
 *
 * @example
 * ```ts
 * await createRefundCommand().run(['--db', 'a.db', '--order-id', 'o-1'], io);
 * ```
 */
export function createRefundCommand(ctx: CommandContext = defaultContext): Command {
  return defineCommand(refundSpec, async ({ values }, io) => {
    const orderId = values['order-id'];
    const campaignId = values['campaign-id'];
    const account = values.account;
    const backend = await openFromFlags(ctx, backendFlags(values), io.env);
    try {
      let result: RefundOutcome;
      try {
        result = await backend.outbox.refund({
          orderId,
          ...(account === undefined ? {} : { account }),
          ...(campaignId === undefined ? {} : { campaignId }),
        });
      } catch (error) {
        const problem = validationProblem(error);
        if (problem === null) throw error;
        throw new UsageError(`${FLAG_OF_FIELD[problem.field] ?? problem.field}: ${problem.reason}`);
      }
      if (values.json) {
        io.stdout(`${jsonText({ outcome: result.outcome, job: jobView(result.job) })}\n`);
      } else {
        io.stdout(`${describeOutcome(result)}\n`);
      }
      return EXIT.ok;
    } finally {
      await backend.outbox.close();
    }
  });
}

export const command: Command = createRefundCommand();

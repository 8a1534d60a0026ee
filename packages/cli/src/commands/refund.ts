/**
 * `postback refund`: reverse one order from the shell. Cancels a confirmation that was not sent yet, or
 * enqueues a reversal that the worker sends once the confirmation is delivered.
 */
import type { RefundOutcome } from '@postback/core';
import {
  BACKEND_OPTIONS,
  backendFlags,
  EXIT,
  HELP_OPTION,
  parseFlags,
  runGuarded,
  UsageError,
  validationProblem,
} from '../args.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { jobView, jsonText, text } from '../format.ts';
import type { Command } from '../main.ts';

const HELP = `Usage: postback refund (--db FILE | --pg URL | --sqs URL) --order-id O [--campaign-id C] [--json]

Reverses one order: cancels its confirmation if it was not sent yet, otherwise enqueues a reversal.

Options:
  --order-id O       the order to reverse
  --campaign-id C    the campaign (cmp_...) to reverse in; not needed when this outbox delivered
                     the confirmation (its response carries the campaign)
  --json             print {"outcome": "enqueued"|"duplicate"|"cancelled"|"not-charged"|"updated",
                     "job": {...}}

Exit codes: 0 done (any outcome), 2 invalid flag or value, 3 backend unreachable.
`;

const FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  orderId: '--order-id',
  campaignId: '--campaign-id',
};

function describeOutcome(result: RefundOutcome): string {
  const { job } = result;
  switch (result.outcome) {
    case 'enqueued':
      return text`created refund job ${job.id} for order ${job.orderId}`;
    case 'duplicate':
      return text`order ${job.orderId} already has a refund job ${job.id} (${job.state}); nothing changed`;
    case 'cancelled':
      return text`the confirmation of order ${job.orderId} was not sent: cancelled it (${job.id}); nothing was charged`;
    case 'not-charged':
      return text`the confirmation of order ${job.orderId} ended ${job.state} without a charge; nothing to reverse`;
    case 'updated':
      return text`refund job ${job.id} of order ${job.orderId} now reverses in campaign ${job.campaignId} (${job.state})`;
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
  return {
    summary: 'Reverse one order (cancel or enqueue a reversal)',
    run: (args, io) =>
      runGuarded('refund', io, async () => {
        const { values } = parseFlags(args, {
          ...BACKEND_OPTIONS,
          ...HELP_OPTION,
          json: { type: 'boolean' },
          'order-id': { type: 'string' },
          'campaign-id': { type: 'string' },
        });
        if (values.help) {
          io.stdout(HELP);
          return EXIT.ok;
        }
        const orderId = values['order-id'];
        if (orderId === undefined) throw new UsageError('--order-id is required');
        const campaignId = values['campaign-id'];
        const backend = await openFromFlags(ctx, backendFlags(values), io.env);
        try {
          let result: RefundOutcome;
          try {
            result = await backend.outbox.refund(
              campaignId === undefined ? { orderId } : { orderId, campaignId },
            );
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
      }),
  };
}

export const command: Command = createRefundCommand();

/**
 * `postback confirm`: enqueue the confirmation of one order from the shell (backfills, support cases).
 * The outbox validates the job exactly as it does for the app; a bad value is a usage error naming the
 * flag, and an order that already has a confirmation is reported, not duplicated.
 */
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
import { iso, jobView, jsonText, text } from '../format.ts';
import type { Command } from '../main.ts';
import { parseClickedAt } from '../ndjson.ts';

const HELP = `Usage: postback confirm (--db FILE | --pg URL | --sqs URL) --click-token T --order-id O
                        --value-micros N [--clicked-at ISO] [--json]

Enqueues the confirmation of one order. Run 'postback worker' to deliver it.

Options:
  --click-token T     the click token that arrived on the landing URL
  --order-id O        your order id (the idempotency key at the service)
  --value-micros N    order value in integer micros (1 USD = 1000000)
  --clicked-at ISO    when the click happened, ISO 8601 with a zone (default: now). The deadline is
                      7 days after it, minus a safety margin: give the real click time.
  --json              print {"created": boolean, "job": {...}}

Exit codes: 0 enqueued or already there, 2 invalid flag or value (the message names it),
3 backend unreachable.
`;

/** Job fields as the outbox names them → the flag a user typed. */
export const CONFIRM_FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  orderId: '--order-id',
  valueMicros: '--value-micros',
  click: '--click-token',
  'click.token': '--click-token',
  'click.clickedAt': '--clicked-at',
};

/**
 * Builds the `confirm` command with its dependencies.
 *
 * @example
 * ```ts
 * await createConfirmCommand().run(['--db', 'a.db', '--click-token', 't', '--order-id', 'o', '--value-micros', '1'], io);
 * ```
 */
export function createConfirmCommand(ctx: CommandContext = defaultContext): Command {
  return {
    summary: 'Enqueue the confirmation of one order',
    run: (args, io) =>
      runGuarded('confirm', io, async () => {
        const { values } = parseFlags(args, {
          ...BACKEND_OPTIONS,
          ...HELP_OPTION,
          json: { type: 'boolean' },
          'click-token': { type: 'string' },
          'order-id': { type: 'string' },
          'value-micros': { type: 'string' },
          'clicked-at': { type: 'string' },
        });
        if (values.help) {
          io.stdout(HELP);
          return EXIT.ok;
        }
        const token = values['click-token'];
        const orderId = values['order-id'];
        const micros = values['value-micros'];
        if (token === undefined) throw new UsageError('--click-token is required');
        if (orderId === undefined) throw new UsageError('--order-id is required');
        if (micros === undefined) throw new UsageError('--value-micros is required');
        if (!/^\d+$/.test(micros) || !Number.isSafeInteger(Number(micros))) {
          throw new UsageError(`--value-micros must be a non-negative integer of micros, got '${micros}'`);
        }
        let clickedAt = ctx.now();
        if (values['clicked-at'] !== undefined) {
          const parsed = parseClickedAt(values['clicked-at']);
          if (parsed === null) {
            throw new UsageError(
              `--clicked-at must be ISO 8601 with a zone (e.g. 2026-01-02T03:04:05Z), got '${values['clicked-at']}'`,
            );
          }
          clickedAt = parsed;
        }
        const backend = await openFromFlags(ctx, backendFlags(values), io.env);
        try {
          let result: Awaited<ReturnType<typeof backend.outbox.confirm>>;
          try {
            result = await backend.outbox.confirm({
              orderId,
              valueMicros: Number(micros),
              click: { token, clickedAt },
            });
          } catch (error) {
            const problem = validationProblem(error);
            if (problem === null) throw error;
            throw new UsageError(
              `${CONFIRM_FLAG_OF_FIELD[problem.field] ?? problem.field}: ${problem.reason}`,
            );
          }
          const { created, job } = result;
          if (values.json) {
            io.stdout(`${jsonText({ created, job: jobView(job) })}\n`);
          } else if (created) {
            io.stdout(
              text`created confirm job ${job.id} for order ${job.orderId} (deadline ${iso(job.deadline)})\n`,
            );
          } else {
            io.stdout(
              text`order ${job.orderId} already has a confirm job ${job.id} (${job.state}); nothing changed\n`,
            );
          }
          return EXIT.ok;
        } finally {
          await backend.outbox.close();
        }
      }),
  };
}

export const command: Command = createConfirmCommand();

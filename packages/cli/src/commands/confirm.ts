/**
 * `postback confirm`: enqueue the confirmation of one order from the shell (backfills, support cases).
 * The outbox validates the job exactly as it does for the app; a bad value is a usage error naming the
 * flag, and an order that already has a confirmation is reported, not duplicated.
 */
import { backendFlags, EXIT, UsageError, validationProblem } from '../args.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { iso, jobView, jsonText, orderText, text } from '../format.ts';
import { parseClickedAt } from '../ndjson.ts';
import { confirmSpec } from '../specs/confirm.ts';

/** Job fields as the outbox names them → the flag a user typed. */
export const CONFIRM_FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  orderId: '--order-id',
  valueMicros: '--value-micros',
  click: '--click-token',
  'click.token': '--click-token',
  'click.clickedAt': '--clicked-at',
  account: '--account',
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
  return defineCommand(confirmSpec, async ({ values }, io) => {
    const token = values['click-token'];
    const orderId = values['order-id'];
    const micros = values['value-micros'];
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
          ...(values.account === undefined ? {} : { account: values.account }),
        });
      } catch (error) {
        const problem = validationProblem(error);
        if (problem === null) throw error;
        throw new UsageError(`${CONFIRM_FLAG_OF_FIELD[problem.field] ?? problem.field}: ${problem.reason}`);
      }
      const { created, job } = result;
      if (values.json) {
        io.stdout(`${jsonText({ created, job: jobView(job) })}\n`);
      } else if (created) {
        io.stdout(
          `${text`created confirm job ${job.id} for `}${orderText(job)}${text` (deadline ${iso(job.deadline)})`}\n`,
        );
      } else {
        io.stdout(
          `${orderText(job)}${text` already has a confirm job ${job.id} (${job.state}); nothing changed`}\n`,
        );
      }
      return EXIT.ok;
    } finally {
      await backend.outbox.close();
    }
  });
}

export const command: Command = createConfirmCommand();

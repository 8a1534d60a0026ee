/**
 * `postback status`: what an operator looks at first — jobs by state, the oldest pending job, the
 * nearest deadline, and the first dead jobs with their reasons.
 */
import { JOB_STATES } from '@postback/core';
import { backendFlags, EXIT } from '../args.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { iso, jobLine, jobView, jsonText, text, when } from '../format.ts';
import { statusSpec } from '../specs/status.ts';

/**
 * Builds the `status` command with its dependencies (tests inject an outbox or a clock).
 *
 * @example
 * ```ts
 * await createStatusCommand().run(['--db', 'postback.db', '--json'], io);
 * ```
 */
export function createStatusCommand(ctx: CommandContext = defaultContext): Command {
  return defineCommand(statusSpec, async ({ values }, io) => {
    const deadLimit = values.dead;
    const backend = await openFromFlags(ctx, backendFlags(values), io.env, { mustExist: true });
    try {
      const now = ctx.now();
      const stats = await backend.outbox.stats(now);
      const dead = stats.counts.dead > 0 ? await backend.outbox.listDead({ limit: deadLimit }) : [];
      const total = JOB_STATES.reduce((sum, state) => sum + stats.counts[state], 0);
      if (values.json) {
        io.stdout(
          `${jsonText({
            backend: backend.describe,
            counts: stats.counts,
            total,
            oldestPendingAt: iso(stats.oldestPendingAt),
            nearestDeadline:
              stats.nearestDeadline === null
                ? null
                : { ...stats.nearestDeadline, deadline: iso(stats.nearestDeadline.deadline) },
            dead: dead.map(jobView),
          })}\n`,
        );
        return EXIT.ok;
      }
      const lines = [text`backend: ${backend.describe}`, `jobs: ${total}`];
      for (const state of JOB_STATES) lines.push(`  ${state.padEnd(10)} ${stats.counts[state]}`);
      lines.push(
        `oldest pending: ${stats.oldestPendingAt === null ? '-' : when(stats.oldestPendingAt, now)}`,
      );
      const nearest = stats.nearestDeadline;
      lines.push(
        `nearest deadline: ${nearest === null ? '-' : text`${when(nearest.deadline, now)}  ${nearest.kind} order ${nearest.orderId} (${nearest.id})`}`,
      );
      if (dead.length > 0) {
        lines.push(`dead jobs (first ${dead.length} of ${stats.counts.dead}; see 'postback dlq list'):`);
        for (const job of dead) lines.push(`  ${jobLine(job)}`);
      }
      io.stdout(`${lines.join('\n')}\n`);
      return EXIT.ok;
    } finally {
      await backend.outbox.close();
    }
  });
}

export const command: Command = createStatusCommand();

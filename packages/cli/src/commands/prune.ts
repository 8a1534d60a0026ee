/**
 * `postback prune`: retention on demand. Deletes old final jobs (never before their deadline, a charged
 * confirmation never before its return window closes) and sweeps old clicks; `--dry-run` counts instead.
 */
import { backendFlags, EXIT } from '../args.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { duration, jsonText } from '../format.ts';
import { prunableJobs, pruneOnce, storeReturnWindowMs } from '../retention.ts';
import { pruneSpec } from '../specs/prune.ts';

/**
 * Builds the `prune` command with its dependencies.
 *
 * @example
 * ```ts
 * await createPruneCommand().run(['--db', 'postback.db', '--older-than', '7d'], io);
 * ```
 */
export function createPruneCommand(ctx: CommandContext = defaultContext): Command {
  return defineCommand(pruneSpec, async ({ values }, io) => {
    // A dry run only looks.
    const backend = await openFromFlags(ctx, backendFlags(values), io.env, {
      mustExist: true,
      readOnly: values['dry-run'],
    });
    try {
      const now = ctx.now();
      const options = {
        olderThanMs: values['older-than'],
        returnWindowMs: values['return-window'] ?? storeReturnWindowMs(backend.outbox),
      };
      const shown = {
        olderThan: duration(options.olderThanMs),
        returnWindow: duration(options.returnWindowMs),
      };
      if (values['dry-run']) {
        const pruned = (await prunableJobs(backend.outbox, now, options)).length;
        io.stdout(
          values.json
            ? `${jsonText({ dryRun: true, pruned, ...options })}\n`
            : `dry run: nothing was deleted\nwould prune ${pruned} final job(s) older than ${shown.olderThan} ` +
                `(charged confirmations kept ${shown.returnWindow} for refunds)\n`,
        );
        return EXIT.ok;
      }
      const { pruned, clicks } = await pruneOnce(backend, now, options);
      io.stdout(
        values.json
          ? `${jsonText({ pruned, clicks, ...options })}\n`
          : `pruned ${pruned} final job(s) older than ${shown.olderThan} ` +
              `(charged confirmations kept ${shown.returnWindow} for refunds)` +
              `${clicks === null ? '' : `; swept ${clicks} expired click(s)`}\n`,
      );
      return EXIT.ok;
    } finally {
      await backend.outbox.close();
    }
  });
}

export const command: Command = createPruneCommand();

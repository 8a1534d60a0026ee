/**
 * What a subcommand is — its table and its `run` — and {@link defineCommand}, which gives every command
 * the same front: parse and check the flags against the table, print the help it renders, and map
 * errors to the documented exit codes. `main.ts` only dispatches to commands; commands never import it.
 */
import { EXIT, runGuarded } from './args.ts';
import { type ParsedCommand, parseCommand } from './flags.ts';
import { renderHelp } from './help.ts';
import type { CommandIo } from './io.ts';
import type { CommandSpec, FlagTable } from './spec.ts';

/** A subcommand: its table (summary, flags, help) and its body, which resolves to the exit code. */
export interface Command {
  readonly spec: CommandSpec;
  run(args: string[], io: CommandIo): Promise<number>;
}

/**
 * Builds a command from its table and a body that receives checked flag values. `--help` prints the
 * help rendered from the table and exits 0; usage errors exit 2 (see `runGuarded`).
 *
 * @example
 * ```ts
 * export const command = defineCommand(statusSpec, async ({ values }, io) => {
 *   io.stdout(`showing ${values.dead} dead jobs\n`);
 *   return EXIT.ok;
 * });
 * ```
 */
export function defineCommand<F extends FlagTable>(
  spec: CommandSpec<F>,
  body: (parsed: ParsedCommand<F>, io: CommandIo) => Promise<number>,
): Command {
  return {
    spec,
    run: (args, io) =>
      runGuarded(spec.name, io, async () => {
        const parsed = parseCommand(spec, args, io.env);
        if (parsed.help) {
          io.stdout(renderHelp(spec));
          return EXIT.ok;
        }
        return body(parsed, io);
      }),
  };
}

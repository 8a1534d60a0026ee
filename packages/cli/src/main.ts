/**
 * Entry point of the `postback` command. Each subcommand lives in `commands/<name>.ts` and is loaded only
 * when used, so `postback sandbox` does not load database drivers. A command module exports
 * `run(args, io)` and resolves to the process exit code.
 *
 * Exit codes (stable, for shell scripts): 0 success, 1 the operation failed, 2 usage error (bad flags or
 * input), 3 a needed service or file could not be reached.
 */
import { text } from './format.ts';
import type { CommandIo } from './io.ts';
import { defaultIo } from './io.ts';

/** A subcommand: parses its own arguments and returns the exit code. */
export interface Command {
  summary: string;
  run(args: string[], io: CommandIo): Promise<number>;
}

const commands: Record<string, () => Promise<{ command: Command }>> = {
  worker: () => import('./commands/worker.ts'),
  status: () => import('./commands/status.ts'),
  dlq: () => import('./commands/dlq.ts'),
  confirm: () => import('./commands/confirm.ts'),
  refund: () => import('./commands/refund.ts'),
  enqueue: () => import('./commands/enqueue.ts'),
  sandbox: () => import('./commands/sandbox.ts'),
  migrate: () => import('./commands/migrate.ts'),
};

function usage(): string {
  return [
    'Usage: postback <command> [options]',
    '',
    'Commands:',
    ...Object.keys(commands).map((name) => `  ${name}`),
    '',
    'Run `postback <command> --help` for the options of one command.',
  ].join('\n');
}

/**
 * Runs the CLI with the given arguments (without `node` and the script path).
 *
 * @example
 * ```ts
 * process.exitCode = await main(['status', '--db', 'postback.db', '--json']);
 * ```
 */
export async function main(argv: string[], io: CommandIo = defaultIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(`${usage()}\n`);
    return name === undefined ? 2 : 0;
  }
  const load = commands[name];
  if (load === undefined) {
    io.stderr(`${text`postback: unknown command '${name}'`}\n\n${usage()}\n`);
    return 2;
  }
  const { command } = await load();
  return command.run(rest, io);
}

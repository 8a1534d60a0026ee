/**
 * Entry point of the `postback` command. Each subcommand lives in `commands/<name>.ts` and is loaded only
 * when used, so `postback sandbox` does not load database drivers; its table (`specs/<name>.ts`) holds
 * its summary, flags and help. A command module exports `command` (see `command.ts`), whose `run(args,
 * io)` resolves to the process exit code.
 *
 * Exit codes (stable, for shell scripts): 0 success, 1 the operation failed, 2 usage error (bad flags or
 * input), 3 a needed service or file could not be reached.
 */
import type { Command } from './command.ts';
import { text } from './format.ts';
import { renderOverview } from './help.ts';
import type { CommandIo } from './io.ts';
import { defaultIo } from './io.ts';
import { cliVersion } from './version.ts';

/** Each command's module by name; `specs/index.ts` holds their tables in the same order. */
export const COMMAND_LOADERS: Readonly<Record<string, () => Promise<{ command: Command }>>> = {
  worker: () => import('./commands/worker.ts'),
  status: () => import('./commands/status.ts'),
  jobs: () => import('./commands/jobs.ts'),
  job: () => import('./commands/job.ts'),
  dlq: () => import('./commands/dlq.ts'),
  prune: () => import('./commands/prune.ts'),
  confirm: () => import('./commands/confirm.ts'),
  refund: () => import('./commands/refund.ts'),
  enqueue: () => import('./commands/enqueue.ts'),
  sandbox: () => import('./commands/sandbox.ts'),
  dashboard: () => import('./commands/dashboard.ts'),
  migrate: () => import('./commands/migrate.ts'),
  doctor: () => import('./commands/doctor.ts'),
  reconcile: () => import('./commands/reconcile.ts'),
  shadow: () => import('./commands/shadow.ts'),
  held: () => import('./commands/held.ts'),
  ledger: () => import('./commands/ledger.ts'),
};

/** The overview of every command; the tables are loaded only when it is printed. */
async function overview(): Promise<string> {
  const { COMMAND_SPECS } = await import('./specs/index.ts');
  return renderOverview(COMMAND_SPECS);
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
    io.stdout(await overview());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version') {
    io.stdout(`${cliVersion()}\n`);
    return 0;
  }
  const load = Object.hasOwn(COMMAND_LOADERS, name) ? COMMAND_LOADERS[name] : undefined;
  if (load === undefined) {
    io.stderr(`${text`postback: unknown command '${name}'`}\n\n${await overview()}`);
    return 2;
  }
  const { command } = await load();
  return command.run(rest, io);
}

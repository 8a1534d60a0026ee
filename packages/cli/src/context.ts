/**
 * What the queue commands need from outside their flags — how to open a backend and what time it is —
 * gathered in one object so tests can hand a command a prepared outbox or a fixed clock. The real CLI
 * always uses {@link defaultContext}, whose `openBackend` is the one from `backends/index.ts`.
 */
import { existsSync } from 'node:fs';
import { UnreachableError } from './args.ts';
import { BackendFlagError, type BackendFlags, type OpenedBackend } from './backends/backend.ts';
import { openBackend } from './backends/index.ts';
import { MissingPackageError } from './backends/packages.ts';

/** Injected dependencies of a queue command. */
export interface CommandContext {
  openBackend(flags: BackendFlags, env: Record<string, string | undefined>): Promise<OpenedBackend>;
  now(): number;
}

/** The real dependencies. */
export const defaultContext: CommandContext = { openBackend, now: () => Date.now() };

/**
 * Opens the backend named by the flags. A missing or doubled backend flag stays a usage error, a
 * backend package that is not installed a {@link MissingPackageError} (exit 2); any other failure to
 * open becomes an {@link UnreachableError} (exit 3). With `mustExist`, a `--db` file that does not exist is refused instead of silently created, and one that is empty or of an older schema is
 * neither filled nor migrated (reading commands).
 *
 * @example
 * ```ts
 * const { outbox } = await openFromFlags(ctx, { db: 'postback.db' }, io.env, { mustExist: true });
 * ```
 */
export async function openFromFlags(
  ctx: CommandContext,
  flags: BackendFlags,
  env: Record<string, string | undefined>,
  options: { mustExist?: boolean } = {},
): Promise<OpenedBackend> {
  if (options.mustExist && flags.db !== undefined && flags.pg === undefined && flags.sqs === undefined) {
    if (!existsSync(flags.db)) throw new UnreachableError(`no such database file: ${flags.db}`);
  }
  try {
    return await ctx.openBackend(options.mustExist ? { ...flags, create: false } : flags, env);
  } catch (error) {
    if (error instanceof BackendFlagError || error instanceof MissingPackageError) throw error;
    // Driver messages name hosts and files, never the password of a URL; the URL itself is not printed.
    const message = error instanceof Error ? error.message : String(error);
    throw new UnreachableError(`cannot open the backend: ${message}`, { cause: error });
  }
}

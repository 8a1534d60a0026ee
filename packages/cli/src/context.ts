/**
 * What the queue commands need from outside their flags — how to open a backend and what time it is —
 * gathered in one object so tests can hand a command a prepared outbox or a fixed clock. The real CLI
 * always uses {@link defaultContext}, whose `openBackend` is the one from `backends/index.ts`.
 */
import { existsSync } from 'node:fs';
import { OptionsError } from '@postback/core';
import { UnreachableError, UsageError } from './args.ts';
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
 * open becomes an {@link UnreachableError} (exit 3), but a bad value of a store's variable (an
 * `OptionsError`, raised before anything is opened) is a {@link UsageError} (exit 2). With `mustExist`, a
 * `--db` file that does not exist is refused instead of silently created, and one that is empty or of an
 * older schema is neither filled nor migrated; `readOnly` (commands that only look) also opens it by a
 * connection that cannot write, so a read-only file or mount is read and nothing is modified.
 *
 * @example
 * ```ts
 * const { outbox } = await openFromFlags(ctx, { db: 'postback.db' }, io.env, { readOnly: true });
 * ```
 */
export async function openFromFlags(
  ctx: CommandContext,
  flags: BackendFlags,
  env: Record<string, string | undefined>,
  options: { mustExist?: boolean; readOnly?: boolean } = {},
): Promise<OpenedBackend> {
  const mustExist = options.mustExist || options.readOnly;
  if (mustExist && flags.db !== undefined && flags.pg === undefined && flags.sqs === undefined) {
    if (!existsSync(flags.db)) throw new UnreachableError(`no such database file: ${flags.db}`);
  }
  const access = {
    ...(mustExist ? { create: false } : {}),
    ...(options.readOnly ? { readOnly: true } : {}),
  };
  try {
    return await ctx.openBackend({ ...flags, ...access }, env);
  } catch (error) {
    if (error instanceof BackendFlagError || error instanceof MissingPackageError) throw error;
    // A store's option set from a variable (POSTBACK_SQLITE_*, POSTBACK_PG_SCHEMA), named by it: input,
    // checked before anything is opened or created.
    if (error instanceof OptionsError)
      throw new UsageError(`${error.field}: ${error.message.replace(/^Invalid option [^:]*: /, '')}`);
    // Driver messages name hosts and files, never the password of a URL; the URL itself is not printed.
    const message = error instanceof Error ? error.message : String(error);
    throw new UnreachableError(`cannot open the backend: ${message}`, { cause: error });
  }
}

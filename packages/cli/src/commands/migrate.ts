/**
 * `postback migrate --pg URL [--schema S]`: creates or upgrades postback's tables in a Postgres schema.
 * Safe to run twice and from several deploys at once (the migration takes an advisory lock). `--print`
 * writes the SQL instead, for apps whose own migration tool takes SQL files.
 */
import { OptionsError } from '@postback/core';
import { EXIT, UnreachableError, UsageError } from '../args.ts';
import { loadOptional } from '../backends/packages.ts';
import { describePgUrl } from '../backends/pg-url.ts';
import { type Command, defineCommand } from '../command.ts';
import { text } from '../format.ts';
import { migrateSpec } from '../specs/migrate.ts';

// SQLSTATE classes and socket errors that mean "could not reach or log in to the database".
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ECONNRESET',
  'EHOSTUNREACH',
  '3D000',
  '28000',
  '28P01',
  '57P03',
]);

function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (UNREACHABLE_CODES.has(code) || code.startsWith('08'))) return true;
  return (
    error instanceof Error &&
    /timeout exceeded when trying to connect|Connection terminated/i.test(error.message)
  );
}

/**
 * Builds the `migrate` command.
 *
 * @example
 * ```ts
 * process.exitCode = await createMigrateCommand().run(['--pg', process.env.DATABASE_URL!], io);
 * ```
 */
export function createMigrateCommand(): Command {
  return defineCommand(migrateSpec, async ({ values }, io) => {
    // An optional peer dependency of the CLI: loaded here, so a SQLite-only install can run every other
    // command, and told what to install when it runs this one.
    const { createPostgresOutbox, DEFAULT_SCHEMA, migrate, migrationScript } = await loadOptional(
      '--pg',
      () => import('@postback/postgres'),
    );
    const schema = values.schema ?? DEFAULT_SCHEMA;
    if (values.print) {
      if (values.pg !== undefined) throw new UsageError('give either --pg URL or --print, not both');
      io.stdout(`${usageSafe(() => migrationScript(schema))}\n`);
      return EXIT.ok;
    }
    if (values.pg === undefined || values.pg === '') throw new UsageError('--pg URL is required');
    const url = values.pg;
    const where = describePgUrl(url);
    // Check the name before connecting, so a typo is a usage error, not a connection attempt.
    usageSafe(() => migrationScript(schema));
    // The outbox's own pool (one connection): the CLI needs no driver of its own.
    const { pool } = createPostgresOutbox({ connectionString: url, schema, poolSize: 1 });
    try {
      await pool.query('SELECT 1');
    } catch (error) {
      await pool.end().catch(() => {});
      const reason = (error as Error).message;
      throw new UnreachableError(`cannot connect to ${where}: ${reason}`, { cause: error });
    }
    try {
      const { from, to } = await migrate(pool, { schema });
      io.stdout(
        from === to
          ? text`schema ${schema} on ${where} is up to date (version ${to})\n`
          : text`migrated schema ${schema} on ${where} from version ${from} to ${to}\n`,
      );
      return EXIT.ok;
    } catch (error) {
      if (isUnreachable(error))
        throw new UnreachableError(`lost the connection to ${where}: ${(error as Error).message}`);
      throw new Error(`migration of schema ${schema} on ${where} failed: ${(error as Error).message}`, {
        cause: error,
      });
    } finally {
      await pool.end().catch(() => {});
    }
  });
}

/** Runs `make`, turning an invalid schema name into a usage error naming `--schema`. */
function usageSafe<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof OptionsError)
      throw new UsageError(`--schema ${error.message.replace(/^Invalid option [^:]+: /, '')}`);
    throw error;
  }
}

export const command: Command = createMigrateCommand();

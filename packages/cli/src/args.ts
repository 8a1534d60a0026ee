/**
 * Flag parsing and exit codes shared by the queue commands. Every command parses its flags with
 * `node:util` `parseArgs` in strict mode through {@link parseFlags}, so an unknown or malformed flag is a
 * usage error (exit 2) with the same wording everywhere, and {@link runGuarded} turns the few error
 * families into the documented exit codes.
 */
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { JobValidationError } from '@postback/core';
import { BackendFlagError, type BackendFlags } from './backends/index.ts';
import { printable } from './format.ts';
import type { CommandIo } from './io.ts';

/**
 * The exit codes of every command, stable for shell scripts.
 *
 * @example
 * ```ts
 * if (code === EXIT.unreachable) console.error('is the database up?');
 * ```
 */
export const EXIT = Object.freeze({
  /** The command did what was asked. */
  ok: 0,
  /** The command ran but the operation failed (a bad input line, a job not found, a failed shutdown). */
  failed: 1,
  /** Bad flags or bad input: nothing was done. */
  usage: 2,
  /** The backend (database file, Postgres, SQS) or the ad service could not be reached. */
  unreachable: 3,
  /** `worker --drain` ended with delivery paused because the service refused the API key (401/403). */
  keyRefused: 4,
  /**
   * `worker --drain` ended with delivery paused by an answer that is not the service's (a 404 without its
   * JSON error: a wrong base URL, a proxy): a configuration error.
   */
  misconfigured: 5,
});

/** A usage error: a bad flag or a bad value. Reported as `postback <command>: <message>`, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The backend could not be opened or reached. Exit 3. */
export class UnreachableError extends Error {
  override name = 'UnreachableError';
}

/** The flags every queue command takes to choose its backend. */
export const BACKEND_OPTIONS = {
  db: { type: 'string' },
  pg: { type: 'string' },
  sqs: { type: 'string' },
} as const satisfies ParseArgsOptionsConfig;

/** The `--help` flag every command takes. */
export const HELP_OPTION = {
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsOptionsConfig;

/**
 * Parses `args` strictly against `options`; unknown flags, missing values and stray positionals become a
 * {@link UsageError}.
 *
 * @example
 * ```ts
 * const { values } = parseFlags(['--db', 'a.db', '--json'], { db: { type: 'string' }, json: { type: 'boolean' } });
 * ```
 */
export function parseFlags<T extends ParseArgsOptionsConfig>(
  args: string[],
  options: T,
  allowPositionals = false,
): ReturnType<typeof parseArgs<{ args: string[]; options: T; strict: true; allowPositionals: boolean }>> {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (error) {
    // parseArgs' own messages name the flag ("Unknown option '--x'"); keep them, drop the stack.
    throw new UsageError(
      error instanceof Error ? (error.message.split('. To specify')[0] ?? error.message) : String(error),
    );
  }
}

/** Picks the backend flags out of parsed values. */
export function backendFlags(values: {
  db?: string | undefined;
  pg?: string | undefined;
  sqs?: string | undefined;
}): BackendFlags {
  const flags: BackendFlags = {};
  if (values.db !== undefined) flags.db = values.db;
  if (values.pg !== undefined) flags.pg = values.pg;
  if (values.sqs !== undefined) flags.sqs = values.sqs;
  return flags;
}

/**
 * Parses a flag value that must be a positive integer (counts, milliseconds).
 *
 * @example
 * ```ts
 * positiveInt('--concurrency', '8'); // 8
 * ```
 */
export function positiveInt(flag: string, value: string | undefined, fallback?: number): number {
  if (value === undefined) {
    if (fallback === undefined) throw new UsageError(`${flag} is required`);
    return fallback;
  }
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < 1) {
    throw new UsageError(`${flag} must be a positive integer, got '${value}'`);
  }
  return Number(value);
}

/**
 * Runs a command body and maps what it throws to an exit code and one line on stderr:
 * usage errors → 2, backend errors → 3, anything else → 1.
 *
 * @example
 * ```ts
 * return runGuarded('status', io, async () => { ...; return EXIT.ok; });
 * ```
 */
export async function runGuarded(name: string, io: CommandIo, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    // Messages may quote a flag's value, a file's line or a service's answer: one line, no escape sequence.
    const message = printable(error instanceof Error ? error.message : String(error));
    if (error instanceof UsageError || error instanceof BackendFlagError) {
      io.stderr(`postback ${name}: ${message}\nRun 'postback ${name} --help' for usage.\n`);
      return EXIT.usage;
    }
    if (error instanceof UnreachableError) {
      io.stderr(`postback ${name}: ${message}\n`);
      return EXIT.unreachable;
    }
    io.stderr(`postback ${name}: ${message}\n`);
    return EXIT.failed;
  }
}

/**
 * The field and reason of a job validation error (`JobValidationError` from `@postback/core`), or null
 * for any other error. The reason drops the error's own "Invalid <field>: " prefix, so the command can
 * name the field the way its user wrote it (a flag, an ndjson key).
 *
 * @example
 * ```ts
 * validationProblem(error); // { field: 'valueMicros', reason: 'must be a non-negative safe integer' }
 * ```
 */
export function validationProblem(error: unknown): { field: string; reason: string } | null {
  if (!(error instanceof JobValidationError)) return null;
  return { field: error.field, reason: error.message.replace(/^Invalid [^:]*: /, '') };
}

/**
 * Exit codes and the errors that map to them, shared by every command: {@link runGuarded} turns the few
 * error families into the documented exit codes. Flags are parsed from each command's table in
 * `flags.ts`.
 */
import { JobValidationError } from '@postback/core';
import { BackendFlagError, type BackendFlags } from './backends/backend.ts';
import { MissingPackageError } from './backends/packages.ts';
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
  /**
   * `worker --drain` ended while a 429 paused delivery (all of it, or accounts) longer than the run may
   * wait, or past the nearest deadline: the jobs are left `pending` for the next run, which sends them
   * when the wait the service asked for ends.
   */
  rateLimited: 6,
});

/** A usage error: a bad flag or a bad value. Reported as `postback <command>: <message>`, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The backend could not be opened or reached. Exit 3. */
export class UnreachableError extends Error {
  override name = 'UnreachableError';
}

/** Picks the backend flags out of parsed values. */
export function backendFlags(values: {
  db?: string | undefined;
  pg?: string | undefined;
  sqs?: string | undefined;
  schema?: string | undefined;
  'sqs-wait-seconds'?: number | undefined;
}): BackendFlags {
  const flags: BackendFlags = {};
  if (values.db !== undefined) flags.db = values.db;
  if (values.pg !== undefined) flags.pg = values.pg;
  if (values.sqs !== undefined) flags.sqs = values.sqs;
  if (values.schema !== undefined) flags.schema = values.schema;
  if (values['sqs-wait-seconds'] !== undefined) flags.sqsWaitSeconds = values['sqs-wait-seconds'];
  return flags;
}

/**
 * Runs a command body and maps what it throws to an exit code and one line on stderr:
 * usage errors and a backend package that is not installed → 2, backend errors → 3, anything else → 1.
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
    if (error instanceof MissingPackageError) {
      io.stderr(`postback ${name}: ${message}\n`);
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

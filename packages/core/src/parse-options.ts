/**
 * The one way an options object of postback is parsed: a zod schema (unknown keys refused) whose first
 * problem becomes an `OptionsError` naming the offending option by its dotted path. Core's own options
 * (capture, memory outbox, Dispatcher) and every store above core (SQLite, Postgres, SQS) call this, so
 * a typo or a bad value fails the same way whichever package it was given to.
 */
import type { z } from 'zod';
import { OptionsError } from './errors.ts';

/**
 * Parses `input` (absent means `{}`) with a strict schema, or throws an {@link OptionsError} for the
 * first problem: an unknown key is named at its own path with `unknown option`; any other problem keeps
 * the schema's message, and a problem of the whole object is named `options`. No message echoes a value.
 *
 * @throws {OptionsError} naming the first bad or unknown option.
 * @example
 * ```ts
 * const options = parseOptions(dispatcherOptionsSchema, userOptions);
 * parseOptions(z.strictObject({ limit: z.int() }), { limt: 5 }); // OptionsError: Invalid option limt: unknown option
 * ```
 */
export function parseOptions<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.map(String) ?? [];
  if (issue?.code === 'unrecognized_keys') {
    throw new OptionsError([...path, issue.keys[0] ?? '?'].join('.'), 'unknown option');
  }
  throw new OptionsError(path.join('.') || 'options', issue?.message ?? 'invalid value');
}

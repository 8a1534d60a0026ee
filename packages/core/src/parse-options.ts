/**
 * Turns a zod options schema's verdict into one `OptionsError` naming the offending option, so every
 * options object of the queue (memory outbox, Dispatcher) fails the same way: unknown keys rejected,
 * bad values named by their dotted path.
 */
import type { z } from 'zod';
import { OptionsError } from '../errors.ts';

/**
 * Parses `input` with a strict schema, or throws an {@link OptionsError} for the first problem.
 *
 * @example
 * ```ts
 * const options = parseOptions(dispatcherOptionsSchema, userOptions);
 * ```
 */
export function parseOptions<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.map(String).join('.') ?? '';
  if (issue?.code === 'unrecognized_keys') {
    throw new OptionsError([path, issue.keys[0]].filter(Boolean).join('.'), 'unknown option');
  }
  throw new OptionsError(path || 'options', issue?.message ?? 'invalid value');
}

/**
 * README tables of options, rendered from their zod schema: each option's schema carries its row (type
 * and default as the README shows them, and what it does) in a registry, so the table a README holds is
 * generated, and a test keeps the two equal (`test/helpers/readme-options-table.ts`, the one checker). The
 * one way every package renders an options table: core's capture and Dispatcher options, and through
 * `@postback/core/store` the SQLite outbox's, the dashboard's, the metrics' and `doctor()`'s.
 */
import { z } from 'zod';

/** How an option is shown in a README table. */
export interface OptionRow {
  /** Type as shown (in a code span; `|` escaped for the table). */
  type: string;
  /** Default as shown ('—' for none, 'required'). */
  default: string;
  /** What the option does, one sentence or two. */
  description: string;
}

const rows = z.registry<OptionRow>();

/**
 * `schema`, registered with its README row.
 *
 * @example
 * ```ts
 * const secure = documented(z.boolean().default(true), 'boolean', '`true`', '`Secure` attribute.');
 * ```
 */
export function documented<S extends z.ZodType>(
  schema: S,
  type: string,
  fallback: string,
  description: string,
): S {
  rows.add(schema, { type, default: fallback, description });
  return schema;
}

/**
 * The Markdown table of the options of `shape` (an object schema's `.shape`), in its key order. Every
 * option must have been {@link documented}.
 *
 * @throws {Error} naming an option without a row.
 * @example
 * ```ts
 * renderOptionsTable(z.strictObject({ secure: documented(z.boolean(), 'boolean', '`true`', 'Secure.') }).shape);
 * ```
 */
export function renderOptionsTable(shape: Readonly<Record<string, z.ZodType>>): string {
  const lines = Object.entries(shape).map(([name, schema]) => {
    const row = rows.get(schema);
    if (row === undefined) throw new Error(`option ${name} has no README row`);
    return `| \`${name}\` | \`${row.type}\` | ${row.default} | ${row.description} |`;
  });
  return ['| option | type | default | what it does |', '|---|---|---|---|', ...lines].join('\n');
}

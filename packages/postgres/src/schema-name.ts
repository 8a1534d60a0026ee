/**
 * The Postgres schema that holds postback's tables: its name is chosen by the caller, so it is checked
 * against a strict pattern and always written quoted. Nothing else from the caller is ever spliced into SQL.
 */
import { OptionsError } from '@postback/core';

/**
 * Schema used when none is given.
 * @defaultValue "postback"
 * @example
 * ```ts
 * createPostgresOutbox({ pool, schema: DEFAULT_SCHEMA });
 * ```
 */
export const DEFAULT_SCHEMA = 'postback';

/**
 * Schema names accepted: lowercase letters, digits and `_`, starting with a letter or `_`, at most 48
 * characters (so the LISTEN channel `postback_<schema>` stays inside Postgres's 63-byte identifier limit).
 * Lowercase only, so the quoted name and the unquoted name a person types in `psql` are the same table.
 * @example
 * ```ts
 * SCHEMA_NAME_PATTERN.test('shop_postback'); // true
 * ```
 */
export const SCHEMA_NAME_PATTERN: RegExp = /^[a-z_][a-z0-9_]{0,47}$/;

/**
 * Checks a schema name and returns it; throws an `OptionsError` naming `schema` otherwise.
 *
 * @example
 * ```ts
 * validateSchemaName('shop_postback'); // "shop_postback"
 * validateSchemaName('Robert"; drop'); // throws OptionsError
 * ```
 */
export function validateSchemaName(value: unknown, field = 'schema'): string {
  if (typeof value !== 'string' || !SCHEMA_NAME_PATTERN.test(value) || value.startsWith('pg_')) {
    throw new OptionsError(
      field,
      `must be 1-48 lowercase letters, digits or _, starting with a letter or _, and not pg_*, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/**
 * Double-quotes an identifier that has already passed {@link validateSchemaName}.
 *
 * @example
 * ```ts
 * quoteIdent('postback'); // '"postback"'
 * ```
 */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The NOTIFY channel of a schema's queue: workers on the same schema wake each other, workers on other
 * schemas do not.
 *
 * @example
 * ```ts
 * channelOf('postback'); // "postback_postback"
 * ```
 */
export function channelOf(schema: string): string {
  return `postback_${schema}`;
}

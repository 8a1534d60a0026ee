/**
 * SQL literals for the few statements sent through the simple query protocol (several statements in one
 * round trip, where `$n` parameters are not allowed). Only values we checked are inlined: safe integers,
 * null, booleans, and strings escaped the way `pg`'s `escapeLiteral` does (quotes and backslashes
 * doubled, `E''` form when a backslash is present), which is safe whatever `standard_conforming_strings` is.
 */

/** One value as a SQL literal. Throws for anything that is not null, a boolean, a safe integer or a string. */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'object' && typeof (value as RawSql).raw === 'string') return (value as RawSql).raw;
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`not a safe integer: ${value}`);
    return String(value);
  }
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw new RangeError('strings with NUL characters cannot be stored');
    const body = value.replaceAll("'", "''");
    return value.includes('\\') ? ` E'${body.replaceAll('\\', '\\\\')}'` : `'${body}'`;
  }
  throw new TypeError(`cannot inline a ${typeof value}`);
}

/**
 * Replaces `$1`, `$2`, ... in `text` by the literals of `values`, in one pass (an inlined value is never
 * scanned again, and `$10` is read whole).
 *
 * @example
 * ```ts
 * inline('SELECT $1::bigint, $2', [42, "it's"]); // "SELECT 42::bigint, 'it''s'"
 * ```
 */
export function inline(text: string, values: readonly unknown[]): string {
  return text.replaceAll(/\$(\d+)/g, (match, n: string) => {
    const index = Number(n) - 1;
    if (index < 0 || index >= values.length) throw new RangeError(`no value for ${match}`);
    return literal(values[index]);
  });
}

/**
 * An array literal of checked values with an explicit element type (`ARRAY[...]::bigint[]`); an empty
 * array is typed too, which a bare `ARRAY[]` cannot be.
 *
 * @example
 * ```ts
 * arrayLiteral(['1', '2'], 'bigint'); // "ARRAY['1','2']::bigint[]"
 * ```
 */
export function arrayLiteral(values: readonly unknown[], type: 'bigint' | 'text'): RawSql {
  return { raw: `ARRAY[${values.map(literal).join(',')}]::${type}[]` };
}

/** SQL that {@link inline} inserts as it is (built only by this module from checked values). */
export interface RawSql {
  raw: string;
}

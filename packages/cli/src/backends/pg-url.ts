/**
 * How a PostgreSQL connection URL is printed. Kept apart from `postgres.ts`, which imports
 * `@postback/postgres`, so that `postback migrate` can word its messages before it loads that optional
 * package.
 */

/**
 * A connection URL as it may be printed: user, host, port and database, never the password or the
 * query string (which may carry `password=` or TLS key paths).
 *
 * @example
 * ```ts
 * describePgUrl('postgres://app:s3cret@db:5432/shop?sslmode=require'); // "postgres://app@db:5432/shop"
 * ```
 */
export function describePgUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
      return 'postgres (connection string hidden)';
    const user = parsed.username === '' ? '' : `${decodeURIComponent(parsed.username)}@`;
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
  } catch {
    return 'postgres (connection string hidden)';
  }
}

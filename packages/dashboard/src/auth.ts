/**
 * The token comparison: the `Authorization: Bearer <token>` header against the configured token, in
 * constant time (both sides hashed with SHA-256, then `timingSafeEqual`, so neither the length nor a
 * common prefix shows in the time taken).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * A checker of the `Authorization` header against `token` (in constant time), or null when no token
 * was configured (read-only dashboard).
 *
 * @example
 * ```ts
 * const allowed = tokenCheck(process.env.POSTBACK_DASHBOARD_TOKEN);
 * allowed?.(request.headers.get('authorization')); // true or false
 * ```
 */
export function tokenCheck(token: string | undefined): ((authorization: string | null) => boolean) | null {
  if (token === undefined) return null;
  const expected = digest(token);
  return (authorization) => {
    const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(authorization ?? '');
    return timingSafeEqual(digest(match?.[1] ?? ''), expected);
  };
}

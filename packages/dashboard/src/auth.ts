/**
 * Who may change the outbox: requests that carry the dashboard's token as `Authorization: Bearer
 * <token>`. The page holds the token only in memory after the operator pastes it, and sends it in that
 * header with `fetch`: no cookie is ever set, so another site cannot make a browser send it (CSRF), and
 * a cross-site request cannot set the header without a CORS preflight, which this handler never grants.
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
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (match === null) return false;
    return timingSafeEqual(digest(match[1] ?? ''), expected);
  };
}

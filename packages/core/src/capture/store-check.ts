/**
 * What a `ClickStore` returns is checked like any click from outside: a user-supplied store (or a row
 * written by something else) could hand back a token with CR/LF, which would otherwise reach `Set-Cookie`
 * in clear, or a time no cookie would have been accepted with.
 */
import { type ClickStamp, DEFAULT_MAX_CLOCK_SKEW_MS } from '../click.ts';
import { checkClickToken, type TokenProblem, type TokenRules } from './token.ts';

/**
 * Why a click from the store was ignored: not a `{ token, clickedAt }` at all (`malformed`), a token capture
 * would refuse in a URL (a {@link TokenProblem}), a time further ahead than the allowed clock skew
 * (`future`), or older than the confirmation window (`expired`).
 */
export type StoreProblem = 'malformed' | TokenProblem | 'future' | 'expired';

/**
 * Checks a click a store returned at `now`: null when capture may use it, else the problem.
 *
 * @example
 * ```ts
 * checkStoredClick({ token: 'a\r\nb', clickedAt: now }, now, rules); // 'characters'
 * ```
 */
export function checkStoredClick(
  click: unknown,
  now: number,
  rules: TokenRules & { confirmWindowMs: number },
): StoreProblem | null {
  if (typeof click !== 'object' || click === null) return 'malformed';
  const { token, clickedAt } = click as Partial<ClickStamp>;
  if (typeof token !== 'string' || !Number.isSafeInteger(clickedAt) || (clickedAt as number) < 0)
    return 'malformed';
  const problem = checkClickToken(token, rules);
  if (problem !== null) return problem;
  if ((clickedAt as number) > now + DEFAULT_MAX_CLOCK_SKEW_MS) return 'future';
  return now - (clickedAt as number) > rules.confirmWindowMs ? 'expired' : null;
}

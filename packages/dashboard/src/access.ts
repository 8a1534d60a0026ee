/**
 * Who may do what. Every request first passes the `Host` rule (see `host-check.ts`). Replay and purge
 * (and the page's token check) need `Authorization: Bearer <token>`, a same-site request and a JSON
 * body; with `tokenForReads`, every `api/` read needs the token too. The page holds the token only in
 * memory after the operator pastes it and sends it in that header with `fetch`: no cookie is ever set,
 * so another site cannot make a browser send it (CSRF), and a cross-site request cannot set the header
 * without a CORS preflight, which this handler never grants. Wrong tokens are throttled per client
 * address (see `token-throttle.ts`), and tokens are compared in constant time.
 */
import { ClientError } from './answers.ts';
import { tokenCheck } from './auth.ts';
import { checkHost } from './host-check.ts';
import type { ResolvedDashboardOptions } from './options.ts';
import { createTokenThrottle } from './token-throttle.ts';

/** What the server knows of a request besides the request itself (the Node adapter fills it in). */
export interface RequestContext {
  /** The client's address, for the token throttle (all clients share one record without it). */
  remoteAddress?: string;
  /** The address the request arrived on: a loopback one turns the `Host` rule on. */
  localAddress?: string;
}

/** The checks of one dashboard; each throws a {@link ClientError} to refuse. */
export interface Access {
  /** Whether a token was configured (replay and purge possible at all). */
  readonly writable: boolean;
  /** The `Host` rule. */
  host(request: Request, context: RequestContext): void;
  /** A read of the API: the token when `tokenForReads`. */
  read(request: Request, context: RequestContext): void;
  /** Replay, purge or the token check. */
  change(request: Request, context: RequestContext): void;
}

/**
 * The checks for options `o`.
 *
 * @example
 * ```ts
 * const access = createAccess(options, Date.now);
 * access.change(request, { remoteAddress: '127.0.0.1' }); // throws ClientError(403) without the token
 * ```
 */
export function createAccess(
  o: Pick<
    ResolvedDashboardOptions,
    'token' | 'tokenForReads' | 'allowedHosts' | 'maxTokenFailures' | 'tokenLockoutMs'
  >,
  now: () => number,
): Access {
  const matches = tokenCheck(o.token);
  const throttle = createTokenThrottle({ maxFailures: o.maxTokenFailures, lockoutMs: o.tokenLockoutMs, now });

  /** The token the request carries; `missing` is the status when it carries none. */
  function requireToken(request: Request, context: RequestContext, missing: 401 | 403): void {
    if (matches === null) throw new ClientError(403, 'read-only: the dashboard was started without a token');
    const authorization = request.headers.get('authorization');
    if (authorization === null) {
      throw new ClientError(
        missing,
        missing === 401 ? 'this dashboard needs the token' : 'a valid token is needed',
        missing === 401 ? { 'www-authenticate': 'Bearer realm="postback dashboard"' } : {},
      );
    }
    const locked = throttle.lockedFor(context.remoteAddress);
    if (locked > 0) {
      const seconds = Math.ceil(locked / 1_000);
      throw new ClientError(429, `too many wrong tokens from this address: try again in ${seconds} s`, {
        'retry-after': String(seconds),
      });
    }
    if (!matches(authorization)) {
      throttle.failed(context.remoteAddress);
      throw new ClientError(403, 'a valid token is needed');
    }
    throttle.succeeded(context.remoteAddress);
  }

  return {
    writable: matches !== null,
    host(request, context) {
      let value = request.headers.get('host');
      if (value === null) value = new URL(request.url).host || null;
      checkHost(value, { allowedHosts: o.allowedHosts, localAddress: context.localAddress });
    },
    read(request, context) {
      if (o.tokenForReads) requireToken(request, context, 401);
    },
    change(request, context) {
      if (matches === null)
        throw new ClientError(403, 'read-only: the dashboard was started without a token');
      const site = request.headers.get('sec-fetch-site');
      if (site !== null && site !== 'same-origin' && site !== 'none') {
        throw new ClientError(403, 'cross-site request refused');
      }
      requireToken(request, context, 403);
      if (!(request.headers.get('content-type') ?? '').startsWith('application/json')) {
        throw new ClientError(415, 'send application/json');
      }
    },
  };
}

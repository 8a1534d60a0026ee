/**
 * `GET /_sandbox/requests` and `DELETE /_sandbox/requests`: the request log and the per-key counters, so a
 * test can count what a client sent and what it got (429s per key, requests after a `Retry-After`). Keys
 * are named by account and scope (`conversions`), never by the key itself.
 */
import type { Answer, RequestContext } from '../context.ts';
import { iso } from '../ids.ts';
import { badField } from '../problem.ts';
import type { RequestFilter } from '../request-log.ts';
import { KEY_NAMES, type KeyName } from '../state.ts';

function readFilter(query: URLSearchParams): RequestFilter {
  const filter: RequestFilter = {};
  const accountId = query.get('account_id');
  if (accountId !== null) filter.accountId = accountId;
  const key = query.get('key');
  if (key !== null) {
    if (!(KEY_NAMES as readonly string[]).includes(key))
      throw badField('key', `must be one of ${KEY_NAMES.join(', ')}`);
    filter.key = key as KeyName;
  }
  const status = query.get('status');
  if (status !== null) {
    if (status === 'reset') filter.status = null;
    else if (/^[1-5]\d\d$/.test(status)) filter.status = Number(status);
    else throw badField('status', 'must be an HTTP status (100-599) or reset');
  }
  return filter;
}

function report(ctx: RequestContext, filter: RequestFilter): Answer {
  const requests = ctx.core.requests.list(filter).map((r) => ({
    at: iso(r.at),
    account_id: r.accountId,
    key: r.key,
    method: r.method,
    path: r.path,
    status: r.status,
  }));
  const keys = [];
  for (const k of ctx.core.state.keys.values()) {
    if (k.requests === 0) continue;
    if (filter.accountId !== undefined && k.accountId !== filter.accountId) continue;
    if (filter.key !== undefined && k.name !== filter.key) continue;
    const statuses: Record<string, number> = {};
    for (const [status, count] of [...k.statuses].sort(([a], [b]) => (a ?? 0) - (b ?? 0)))
      statuses[status === null ? 'reset' : String(status)] = count;
    keys.push({
      account_id: k.accountId,
      key: k.name,
      requests: k.requests,
      rate_limited: k.rateLimited,
      statuses,
    });
  }
  return { status: 200, body: { requests, keys, dropped: ctx.core.requests.dropped } };
}

/** GET /_sandbox/requests */
export function listRequests(ctx: RequestContext): Answer {
  return report(ctx, readFilter(ctx.query));
}

/** DELETE /_sandbox/requests: empties the log and zeroes every key's counters. */
export function clearRequests(ctx: RequestContext): Answer {
  ctx.core.requests.clear();
  for (const k of ctx.core.state.keys.values()) {
    k.requests = 0;
    k.rateLimited = 0;
    k.statuses.clear();
  }
  return report(ctx, {});
}

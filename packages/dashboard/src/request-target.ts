/**
 * Which request targets the dashboard takes. Core's `parseRequestTarget` (shared with the metrics
 * endpoint) refuses what is no target at all: a character RFC 3986 does not allow, a bad `%` escape in
 * the path or the query, a bad authority. On top of it the dashboard refuses what its routes would
 * otherwise read as a mount path to redirect to: a path longer than {@link MAX_PATH_LENGTH} (414), an
 * empty segment (`//a:b`), a dot segment (`..`, `%2e%2e`: what a URL parser resolves, so a `Request`
 * built from it would name another path), and an escape that decodes to no UTF-8 text or to a control
 * character (`%00`). Each is a {@link ClientError} naming what is wrong, before any `Request` is built.
 */
import { parseRequestTarget, type RequestTarget } from '@postback/core/store';
import { ClientError } from './answers.ts';

/**
 * Longest request path the dashboard serves (the query is not counted): its base path and
 * `api/jobs/<id>` with an escaped job id of at most 1,024 characters fit well within it. Longer is a 414.
 * @defaultValue 4_096
 */
export const MAX_PATH_LENGTH = 4_096;

/** A `%` not followed by two hex digits. */
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
const CONTROL = /\p{Cc}/u;

/**
 * The path and query of `target` (origin-form, or an http(s) absolute-form), as sent.
 *
 * @throws {ClientError} 400 naming what is wrong with a malformed target, 414 for a path too long.
 * @example
 * ```ts
 * readTarget('/ops/api/jobs?state=dead'); // { path: '/ops/api/jobs', search: '?state=dead' }
 * readTarget('/ops/../../etc/passwd'); // throws ClientError 400: a dot segment
 * ```
 */
export function readTarget(target: string): RequestTarget {
  const read = parseRequestTarget(target);
  if (read === null) {
    throw new ClientError(
      400,
      BAD_ESCAPE.test(target) ? 'the request target holds a bad % escape' : 'the request target is malformed',
    );
  }
  const { path } = read;
  if (path.length > MAX_PATH_LENGTH) throw new ClientError(414, 'the request path is too long');
  const segments = path.split('/');
  // The first segment is the empty one before the leading slash; the last is empty after a trailing one.
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i] as string;
    if (segment === '') {
      if (i === segments.length - 1) break;
      throw new ClientError(400, 'the request path has an empty segment');
    }
    if (!segment.includes('%') && !segment.startsWith('.')) continue;
    let text: string;
    try {
      text = decodeURIComponent(segment);
    } catch {
      throw new ClientError(400, 'the request path holds an escape that is not UTF-8');
    }
    if (text === '.' || text === '..') throw new ClientError(400, 'the request path has a dot segment');
    if (CONTROL.test(text)) throw new ClientError(400, 'the request path holds a control character');
  }
  return read;
}

/**
 * What a request must be before any route sees it: one well-formed `Host` (RFC 9110 `uri-host [":"
 * port]`; none only before HTTP/1.1), no malformed `%` escape in the query (where `URLSearchParams`
 * would silently keep `%ZZ` as text, so a client's encoding bug would pass unseen), and no body on a GET
 * or HEAD (one whose bytes never come would otherwise be answered as if it were whole). The sandbox is an
 * independent oracle and imports none of the kit's packages, so it keeps this small reader of its own.
 * Cheap on purpose: it runs on every request of the benchmark's hot path.
 */
import type { IncomingMessage } from 'node:http';
import { HttpProblem } from '../problem.ts';

/** A registered name or IPv4 address (no escapes), or a bracketed IPv6 literal, then an optional port. */
const HOST = /^(?:[A-Za-z0-9\-._~]{1,253}|\[[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*\])(?::(\d{1,5}))?$/;
/** A `%` not followed by two hex digits. */
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
/** What the refusals below say when the connection cannot be reused (a body may be left unread). */
const CLOSE = { connection: 'close' };

/**
 * Whether `value` is one well-formed `Host`: a name or IPv4 address of at most 253 characters or a
 * bracketed IPv6 literal, and a port of at most 65535. No user info, no space, not empty.
 *
 * @example
 * ```ts
 * isHost('127.0.0.1:4010'); // true
 * isHost('a b'); // false
 * ```
 */
export function isHost(value: string): boolean {
  const match = HOST.exec(value);
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65_535);
}

/**
 * Throws the 400 a malformed request gets before routing: a `Host` missing (HTTP/1.1), repeated or
 * malformed, a bad `%` escape in the query of `url`, a GET or HEAD that carries a body.
 *
 * @throws {HttpProblem} 400, with `connection: close` when the request may have left bytes unread.
 * @example
 * ```ts
 * checkRequest(req, req.url ?? '/');
 * ```
 */
export function checkRequest(req: IncomingMessage, url: string): void {
  const raw = req.rawHeaders;
  let hosts = 0;
  let host = '';
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      hosts += 1;
      host = raw[i + 1] as string;
    }
  }
  if (hosts === 0) {
    if (req.httpVersion === '1.1')
      throw new HttpProblem(400, 'the Host header is missing (required in HTTP/1.1)');
  } else if (hosts > 1) throw new HttpProblem(400, 'more than one Host header');
  else if (!isHost(host)) throw new HttpProblem(400, 'the Host header is not a valid host[:port]');
  const q = url.indexOf('?');
  if (q !== -1 && BAD_ESCAPE.test(url.slice(q + 1)))
    throw new HttpProblem(400, 'query: a % not followed by two hex digits');
  const method = req.method;
  if (
    (method === 'GET' || method === 'HEAD') &&
    (req.headers['transfer-encoding'] !== undefined ||
      (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0'))
  ) {
    throw new HttpProblem(400, `a ${method} request has no body`, CLOSE);
  }
}

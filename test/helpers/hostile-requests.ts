/**
 * Hostile raw HTTP requests, and a sender that writes them byte for byte on a TCP socket: the requests
 * `fetch` and `http.request` refuse to send (a target of `//[`, a `Host` of `a b`, a body cut off, a
 * header past the parser's limit). One list for every HTTP surface we serve (metrics, health, dashboard,
 * sandbox, capture middleware): a surface passes when each request gets a 4xx (or, where Node itself
 * closes the socket, nothing), the process lives, and the next good request is answered.
 */
import { connect } from 'node:net';

/** What a surface must answer to a hostile request. */
export type HostileExpectation =
  /** A 4xx status. */
  | '4xx'
  /** A 4xx, or the socket closed with no answer (Node's own handling, e.g. CONNECT without a listener). */
  | '4xx-or-close'
  /** Nothing can be asked: the client is gone before the server could answer (only the process must live). */
  | 'none';

/** One hostile request. */
export interface HostileRequest {
  /** What it is, for test names. */
  name: string;
  /** The bytes sent, as a latin1 string. */
  raw: string;
  /**
   * How the client leaves after writing: `end` half-closes and reads the answer (the default); `vanish`
   * destroys the socket shortly after, without reading; `open` keeps its side open and reads until the
   * server closes (send `Connection: close`): a browser's way, for servers that drop an answer still
   * being made once the client half-closed (`@hono/node-server` does).
   */
  leave?: 'end' | 'vanish' | 'open';
  expect: HostileExpectation;
}

/** Where the hostile requests are aimed. */
export interface HostileTarget {
  /** A path the surface serves with a 2xx to a good `GET`, e.g. `/metrics`. */
  path: string;
  /** The `Host` a good request sends. @defaultValue `'localhost'` */
  host?: string;
}

/**
 * A raw request: the request line, the header lines and the body, exactly as given.
 *
 * @example
 * ```ts
 * requestLine('GET', '//[', ['Host: a']); // 'GET //[ HTTP/1.1\r\nHost: a\r\n\r\n'
 * ```
 */
export const requestLine = (
  method: string,
  target: string,
  headers: string[] = [],
  body = '',
  version = 'HTTP/1.1',
): string => `${method} ${target} ${version}\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n${body}`;
const line = requestLine;

/**
 * The hostile requests aimed at `path`: bad targets, methods, `Host` values, cut-off and contradictory
 * bodies, bad escapes, huge headers, bad versions, bytes that are not HTTP.
 *
 * @example
 * ```ts
 * for (const request of hostileRequests({ path: '/metrics' })) {
 *   const answer = await sendRaw(port, request);
 *   expect(answer.status).toBeGreaterThanOrEqual(400);
 * }
 * ```
 */
export function hostileRequests({ path, host = 'localhost' }: HostileTarget): HostileRequest[] {
  const h = `Host: ${host}`;
  const get = (target: string, headers: string[] = [h]) => line('GET', target, headers);
  return [
    // Targets that URL parsers throw on.
    { name: 'target //[', raw: get('//['), expect: '4xx' },
    { name: 'target //a:b', raw: get('//a:b'), expect: '4xx' },
    { name: 'target http://[/x', raw: get('http://[/x'), expect: '4xx' },
    { name: `target //:99999${path}`, raw: get(`//:99999${path}`), expect: '4xx' },
    { name: `target http://x:99999${path}`, raw: get(`http://x:99999${path}`), expect: '4xx' },
    { name: 'target ftp://x/ (not http)', raw: get(`ftp://x${path}`), expect: '4xx' },
    { name: 'target *', raw: get('*'), expect: '4xx' },
    { name: 'target without a leading slash', raw: get(path.replace(/^\/+/, '')), expect: '4xx' },
    { name: 'target with a backslash', raw: get(`\\\\evil${path}`), expect: '4xx' },
    { name: 'target with dot segments', raw: get(`${path}/../../../etc/passwd`), expect: '4xx' },
    { name: 'target of 6,000 characters', raw: get(`${path}/${'a'.repeat(6_000)}`), expect: '4xx' },
    // Bad escapes.
    { name: 'escape %ZZ in the path', raw: get(`${path}%ZZ`), expect: '4xx' },
    { name: 'escape % at the end', raw: get(`${path}%`), expect: '4xx' },
    { name: 'escape %E0%A4%A (cut)', raw: get(`${path}/%E0%A4%A`), expect: '4xx' },
    { name: 'escape %ZZ in the query', raw: get(`${path}?q=%ZZ`), expect: '4xx' },
    { name: 'escape %00 (NUL)', raw: get(`${path}%00`), expect: '4xx' },
    // Methods.
    ...['TRACE', 'OPTIONS', 'DELETE', 'PUT', 'PATCH', 'FOO', 'get'].map(
      (method): HostileRequest => ({ name: `method ${method}`, raw: line(method, path, [h]), expect: '4xx' }),
    ),
    {
      name: 'method CONNECT',
      raw: line('CONNECT', 'example.com:443', ['Host: example.com:443']),
      expect: '4xx-or-close',
    },
    // Host values.
    { name: 'Host [', raw: get(path, ['Host: [']), expect: '4xx' },
    { name: 'Host a b', raw: get(path, ['Host: a b']), expect: '4xx' },
    { name: 'Host x:99999999', raw: get(path, ['Host: x:99999999']), expect: '4xx' },
    { name: 'Host user@x', raw: get(path, ['Host: user@x']), expect: '4xx' },
    { name: 'Host empty', raw: get(path, ['Host: ']), expect: '4xx' },
    { name: 'Host missing (HTTP/1.1)', raw: get(path, []), expect: '4xx' },
    { name: 'Host twice', raw: get(path, [h, 'Host: other.example']), expect: '4xx' },
    { name: 'Host of 4,000 characters', raw: get(path, [`Host: ${'h'.repeat(4_000)}`]), expect: '4xx' },
    // Bodies: cut off, contradictory, malformed.
    {
      name: 'POST body cut off (Content-Length 100, 10 sent)',
      raw: line('POST', path, [h, 'Content-Length: 100'], '0123456789'),
      expect: '4xx',
    },
    {
      name: 'GET body cut off (Content-Length 100, 10 sent)',
      raw: line('GET', path, [h, 'Content-Length: 100'], '0123456789'),
      expect: '4xx',
    },
    {
      name: 'POST body cut off, client gone',
      raw: line('POST', path, [h, 'Content-Length: 100'], '0123'),
      leave: 'vanish',
      expect: 'none',
    },
    {
      name: 'GET body cut off, client gone',
      raw: line('GET', path, [h, 'Content-Length: 1000000'], '0123'),
      leave: 'vanish',
      expect: 'none',
    },
    {
      name: 'chunked body with a bad chunk size',
      raw: line('POST', path, [h, 'Transfer-Encoding: chunked'], 'zz\r\nxx\r\n0\r\n\r\n'),
      expect: '4xx',
    },
    {
      name: 'Content-Length and Transfer-Encoding both',
      raw: line('POST', path, [h, 'Content-Length: 3', 'Transfer-Encoding: chunked'], '0\r\n\r\n'),
      expect: '4xx',
    },
    { name: 'Content-Length abc', raw: line('POST', path, [h, 'Content-Length: abc']), expect: '4xx' },
    // Headers.
    { name: 'one header of 20 kB', raw: get(path, [h, `X-Big: ${'a'.repeat(20_000)}`]), expect: '4xx' },
    {
      name: '400 headers',
      raw: get(path, [h, ...Array.from({ length: 400 }, (_, i) => `X-H${i}: ${'v'.repeat(60)}`)]),
      expect: '4xx',
    },
    { name: 'header value with a control character', raw: get(path, [h, 'X-A: a\x01b']), expect: '4xx' },
    { name: 'header name with a space', raw: get(path, [h, 'X A: b']), expect: '4xx' },
    { name: 'folded header line', raw: get(path, [h, 'X-A: a', ' folded']), expect: '4xx' },
    // Versions and bytes that are not HTTP.
    { name: 'version HTTP/9.9', raw: line('GET', path, [h], '', 'HTTP/9.9'), expect: '4xx' },
    { name: 'version HTTP/1.1x', raw: line('GET', path, [h], '', 'HTTP/1.1x'), expect: '4xx' },
    { name: 'raw UTF-8 in the target', raw: Buffer.from(get(`${path}/é`)).toString('latin1'), expect: '4xx' },
    {
      name: 'a TLS ClientHello',
      raw: '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03',
      expect: '4xx-or-close',
    },
    { name: 'blank lines only', raw: '\r\n\r\n\r\n', expect: '4xx-or-close' },
  ];
}

/** What came back on the socket. */
export interface RawAnswer {
  /** The status of the first response line, or null when none came. */
  status: number | null;
  /** Everything received (latin1), cut at 4 kB. */
  text: string;
}

/**
 * Writes `request.raw` to `host:port` and reads until the server closes or `timeoutMs` passes.
 *
 * @example
 * ```ts
 * const { status } = await sendRaw(port, { name: 'x', raw: 'GET //[ HTTP/1.1\r\nHost: a\r\n\r\n', expect: '4xx' });
 * ```
 */
export function sendRaw(
  port: number,
  request: Pick<HostileRequest, 'raw' | 'leave'>,
  { host = '127.0.0.1', timeoutMs = 5_000 }: { host?: string; timeoutMs?: number } = {},
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let text = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
      resolve({ status: status === undefined ? null : Number(status), text: text.slice(0, 4_096) });
    };
    const timer = setTimeout(done, timeoutMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      if (text.length < 4_096) text += chunk;
    });
    socket.on('error', () => {});
    socket.on('close', done);
    socket.write(Buffer.from(request.raw, 'latin1'), () => {
      if (request.leave === 'vanish') setTimeout(() => socket.destroy(), 20);
      else if (request.leave !== 'open') socket.end();
    });
  });
}

/**
 * Who answers a harmless request on the surface: `refuse` for a surface of our own (metrics, health,
 * dashboard, sandbox), where every hostile request must get a 4xx; `app` for our middleware in front of
 * an app (capture), where a request the app can serve (a `Host` of `a b` on `GET /`) gets the app's own
 * page: any status below 500 is then right, and the rule is only that nothing fails or hangs.
 */
export type HostilePolicy = 'refuse' | 'app';

/**
 * Whether `answer` meets `request`'s expectation under `policy`; a message saying what came instead, else null.
 *
 * @example
 * ```ts
 * expect(unmet(request, await sendRaw(port, request))).toBeNull();
 * ```
 */
export function unmet(
  request: HostileRequest,
  answer: RawAnswer,
  policy: HostilePolicy = 'refuse',
): string | null {
  const status = answer.status;
  const is4xx = status !== null && status >= 400 && status < 500;
  if (request.expect === 'none') return null;
  if (is4xx || (request.expect === '4xx-or-close' && status === null)) return null;
  if (policy === 'app' && status !== null && status < 500) return null;
  const got = status === null ? 'no answer' : `status ${status}`;
  const wanted = policy === 'app' ? `${request.expect} or the app's own answer (below 500)` : request.expect;
  return `${request.name}: expected ${wanted}, got ${got}`;
}

/** An answer read apart: status, headers (names in lower case, in order) and body (chunked decoded). */
export interface ParsedAnswer {
  status: number | null;
  headers: [string, string][];
  body: string;
}

/**
 * Splits a raw HTTP/1.1 answer (as {@link sendRaw} returns it) into status, headers and body.
 *
 * @example
 * ```ts
 * const { status, headers, body } = parseAnswer(await sendRaw(port, request));
 * ```
 */
export function parseAnswer(answer: RawAnswer): ParsedAnswer {
  const end = answer.text.indexOf('\r\n\r\n');
  const head = (end < 0 ? answer.text : answer.text.slice(0, end)).split('\r\n').slice(1);
  const headers = head.map((line): [string, string] => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
  });
  let body = end < 0 ? '' : answer.text.slice(end + 4);
  if (headers.some(([name, value]) => name === 'transfer-encoding' && value.includes('chunked'))) {
    let decoded = '';
    for (let at = 0; at < body.length; ) {
      const lineEnd = body.indexOf('\r\n', at);
      const size = Number.parseInt(body.slice(at, lineEnd), 16);
      if (!(size > 0)) break;
      decoded += body.slice(lineEnd + 2, lineEnd + 2 + size);
      at = lineEnd + 2 + size + 2;
    }
    body = decoded;
  }
  return { status: answer.status, headers, body };
}

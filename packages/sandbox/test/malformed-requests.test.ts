/**
 * Every route (`/v1` and `/_sandbox/`) answers a malformed request with a 4xx JSON `{ detail }`, and the
 * server keeps serving: bad targets, bad `%` escapes, bad JSON, bodies cut off, headers over the limit,
 * TRACE and CONNECT, requests Node's parser refuses — sent over raw sockets, since `fetch` refuses to send
 * most of them. After each one a good request is answered.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { CONTROL_ROUTES } from '../src/control/routes.ts';
import { type RunningSandbox, startSandbox, V1_ROUTES } from '../src/index.ts';
import { accountIn } from './fixtures.ts';
import { exchange, type RawAnswer } from './raw-http.ts';

let sandbox: RunningSandbox;
let key: string;
const internalErrors = vi.spyOn(console, 'error');

beforeAll(async () => {
  sandbox = await startSandbox();
  key = (await accountIn(sandbox)).keys.all;
});
afterAll(() => sandbox.close());

/** Every route's path with its parameters filled in. */
const ROUTES = [...V1_ROUTES, ...CONTROL_ROUTES].map((r) => ({
  method: r.method,
  path: r.path.replace(/\{[^}]+\}/g, 'x_1'),
}));
const POSTS = ROUTES.filter((r) => r.method === 'POST');
const PATHS = [...new Set(ROUTES.map((r) => r.path))];

function request(method: string, target: string, headers: string[] = [], body = ''): string {
  const head = [
    `${method} ${target} HTTP/1.1`,
    'Host: 127.0.0.1',
    `authorization: Bearer ${key}`,
    ...headers,
  ];
  if (body !== '' && !headers.some((h) => /^(content-length|transfer-encoding):/i.test(h)))
    head.push(`Content-Length: ${Buffer.byteLength(body, 'latin1')}`);
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/** A 4xx whose body is a JSON object with a string `detail`, dated by the sandbox clock. */
function expectJsonRefusal(answer: RawAnswer | null, what: string): void {
  expect(answer, what).not.toBeNull();
  const { status, headers, body } = answer as RawAnswer;
  expect(status, `${what}: ${body}`).toBeGreaterThanOrEqual(400);
  expect(status, `${what}: ${body}`).toBeLessThan(500);
  expect(headers['content-type'], what).toMatch(/^application\/json/);
  expect(JSON.parse(body), what).toEqual({ detail: expect.any(String) });
  expect(headers.date, what).toMatch(/ GMT$/);
}

async function expectStillServing(): Promise<void> {
  const res = await fetch(`${sandbox.url}/_sandbox/clock`);
  expect(res.status).toBe(200);
}

describe('malformed requests', () => {
  const cases: Array<[string, string, { end?: boolean }?]> = [
    ['a target that is no URL', request('GET', '//[')],
    ['an absolute target that is no URL', request('GET', 'http://[/x')],
    ['a target with a port out of range', request('GET', '//:99999/metrics')],
    ['a bad % escape in a /v1 path parameter', request('GET', '/v1/placements/%ZZ/live')],
    ['a bad % escape in a /v1 query', request('GET', '/v1/refunds?campaign_id=%ZZ%')],
    ['a bad % escape in a control path parameter', request('GET', '/_sandbox/accounts/%E0%A4%A')],
    ['a bad % escape in a control query', request('GET', '/_sandbox/conversions?account_id=%')],
    ['an unknown method', request('FOO', '/v1/me')],
    ['TRACE on an unknown path', request('TRACE', '/')],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'],
    ['bytes that are no HTTP', '\x00\x01\x02 garbage\r\n\r\n'],
    ['an unsupported HTTP version', 'GET /v1/me HTTP/9.9\r\nHost: x\r\n\r\n'],
    ['a header line without a colon', request('GET', '/v1/me', ['Bad Header'])],
    ['HTTP/1.1 without Host', 'GET /_sandbox/clock HTTP/1.1\r\n\r\n'],
    ['headers over the size limit', request('GET', '/v1/me', [`x-big: ${'a'.repeat(70_000)}`])],
    [
      'many headers over the limit',
      request(
        'GET',
        '/_sandbox/clock',
        Array.from({ length: 3_000 }, (_, i) => `x-h${i}: v`),
      ),
    ],
    ['a bad content-length', request('POST', '/_sandbox/accounts', ['Content-Length: abc'], '{}')],
    [
      'both content-length and chunked',
      request(
        'POST',
        '/_sandbox/accounts',
        ['Content-Length: 2', 'Transfer-Encoding: chunked'],
        '2\r\n{}\r\n0\r\n\r\n',
      ),
    ],
    [
      'a bad chunk size',
      request('POST', '/v1/sites', ['Transfer-Encoding: chunked'], 'ZZ\r\n{}\r\n0\r\n\r\n'),
    ],
    ['an Expect other than 100-continue', request('POST', '/_sandbox/accounts', ['Expect: weird'], '{}')],
    ['headers cut off', 'GET /v1/me HTTP/1.1\r\nHost: x\r\n', { end: true }],
    ['a body that is not UTF-8', request('POST', '/_sandbox/accounts', [], '{"\xff\xfe": 1}')],
    ...['[', 'a b', 'x:99999999', 'x:65536', 'user@x', '', 'h'.repeat(4_000)].map(
      (host): [string, string] => [
        `Host ${JSON.stringify(host.slice(0, 12))} (${host.length} characters)`,
        `GET /_sandbox/clock HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      ],
    ),
    ['Host twice', 'GET /_sandbox/clock HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n'],
    ['a bad % escape in a query the route does not read', request('GET', '/_sandbox/clock?q=%ZZ')],
    ['a % at the end of a /v1 query', request('GET', '/v1/me?x=%')],
    [
      'a GET whose body never comes',
      request('GET', '/_sandbox/clock', ['Content-Length: 100'], '0123456789'),
      { end: true },
    ],
    ['a GET /v1 with a body', request('GET', '/v1/me', ['Content-Length: 2'], '{}')],
    ['a chunked GET', request('GET', '/_sandbox/clock', ['Transfer-Encoding: chunked'], '0\r\n\r\n')],
  ];
  test.each(cases)('%s gets a 4xx JSON detail, and the server serves on', async (what, raw, options) => {
    expectJsonRefusal(await exchange(sandbox.port, raw, options), what);
    await expectStillServing();
  });

  test.each(POSTS)('$method $path: bad JSON, a non-object body, a body cut off', async ({ method, path }) => {
    for (const body of ['{"a":', '{x}', '[1]', '"text"', 'null']) {
      expectJsonRefusal(await exchange(sandbox.port, request(method, path, [], body)), `${path} ${body}`);
    }
    const cut = request(method, path, ['Content-Length: 100'], '{"campaign_id": "cm');
    expectJsonRefusal(await exchange(sandbox.port, cut, { end: true }), `${path} cut off`);
    // A client that goes away mid-body: nothing to answer, nothing logged as a sandbox failure.
    expect(await exchange(sandbox.port, cut, { destroy: true })).toBeNull();
    await expectStillServing();
  });

  test.each(PATHS)('TRACE %s is a 405 or 404 JSON detail', async (path) => {
    const answer = await exchange(sandbox.port, request('TRACE', path));
    expectJsonRefusal(answer, `TRACE ${path}`);
    expect([404, 405]).toContain(answer?.status);
    await expectStillServing();
  });

  test('no malformed request was logged as an internal sandbox error', async () => {
    // Requests of clients that went away finish asynchronously: let them.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(internalErrors).not.toHaveBeenCalled();
  });
});

describe('hostile requests, generated', () => {
  const method = fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'TRACE', 'FOO', 'G T');
  const prefix = fc.constantFrom('/v1/', '/_sandbox/', '/', '//', 'http://', '*', '');
  const segment = fc.oneof(
    fc.constantFrom(...PATHS.map((p) => p.replace(/^\/(v1|_sandbox)\//, ''))),
    fc.string({ unit: fc.constantFrom('%', 'Z', '[', ']', ':', '/', '?', '#', '\u00ff', 'a', '0', '.') }),
  );
  const body = fc.oneof(
    fc.constant(''),
    fc.json(),
    fc.string({ unit: 'binary', maxLength: 64 }).map((s) => Buffer.from(s, 'utf8').toString('latin1')),
  );

  test('any method, target and body: an answer under 500, JSON when it has a body; the server lives', async () => {
    await fc.assert(
      fc.asyncProperty(method, prefix, segment, body, fc.boolean(), async (m, p, s, b, end) => {
        const answer = await exchange(sandbox.port, request(m, `${p}${s}`, [], b), { end });
        expect(answer).not.toBeNull();
        const { status, headers, body: text } = answer as RawAnswer;
        expect(status, `${m} ${p}${s} → ${text}`).toBeLessThan(500);
        expect(headers['content-type']).toMatch(/^application\/json/);
        expect(typeof JSON.parse(text)).toBe('object');
        await expectStillServing();
      }),
      { numRuns: 150 },
    );
    expect(internalErrors).not.toHaveBeenCalled();
  });
});

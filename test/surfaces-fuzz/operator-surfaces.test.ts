/**
 * The standing fuzz test of the operators' HTTP surfaces (issue 23): metrics (`/metrics`; its `/healthz`
 * and `/readyz` share the handler and have their own suite in `@postback/metrics`), the dashboard and
 * the sandbox, each in every mount style its README documents, each in a child process (`host.ts`).
 * Every hostile raw request of `test/helpers/hostile-requests.ts` must get a 4xx (or, where Node itself
 * closes the socket, nothing), the process must live, and the next good request must be answered.
 *
 * Cases that still fail are marked `it.fails` below with the engineer who owns the fix: when the fix
 * lands, the mark fails and must go.
 */
import { describe, expect, it } from 'vitest';
import { type HostileRequest, hostileRequests, sendRaw, unmet } from '../helpers/hostile-requests.ts';
import { useHost } from './host-process.ts';

interface Surface {
  /** `<surface>/<mount>`, as `host.ts` names it. */
  mount: string;
  /** A path the surface answers 200 on a good `GET`. */
  path: string;
  /**
   * Requests the mount's server decides on before our handler sees them, where any answer below 500 is
   * right. A Fetch handler behind `@hono/node-server` gets a `Request` the server built: it cannot see an
   * empty, repeated or huge `Host`, nor a `GET` body the server never reads.
   */
  decidedByServer?: readonly string[];
}

const FETCH_SERVER_DECIDES = [
  'Host empty',
  'Host twice',
  'Host of 4,000 characters',
  'GET body cut off (Content-Length 100, 10 sent)',
] as const;

const SURFACES: Surface[] = [
  { mount: 'metrics/node', path: '/metrics' },
  { mount: 'metrics/serve', path: '/metrics' },
  { mount: 'metrics/fetch', path: '/metrics', decidedByServer: FETCH_SERVER_DECIDES },
  { mount: 'dashboard/node', path: '/' },
  { mount: 'dashboard/express5', path: '/ops/postback/' },
  { mount: 'dashboard/express4', path: '/ops/postback/' },
  { mount: 'dashboard/koa', path: '/ops/postback/' },
  { mount: 'dashboard/fastify', path: '/ops/postback/' },
  { mount: 'dashboard/fetch', path: '/', decidedByServer: FETCH_SERVER_DECIDES },
  { mount: 'sandbox/server', path: '/_sandbox/clock' },
];

/**
 * Cases that fail today, by mount, with who fixes them. Each is an `it.fails`: it must fail until the fix
 * lands, and then this list loses it.
 */
const KNOWN_FAILURES: Record<string, { owner: string; cases: readonly string[] }> = {
  'dashboard/node': {
    owner: 'the dashboard’s owner (issue 23 item 2)',
    cases: [
      'target //[',
      'target //a:b',
      'target http://[/x',
      'target //:99999/',
      'target http://x:99999/',
      'target ftp://x/ (not http)',
      'target *',
      'target with dot segments',
      'target of 6,000 characters',
      'escape %ZZ in the path',
      'escape % at the end',
      'escape %E0%A4%A (cut)',
      'escape %ZZ in the query',
      'escape %00 (NUL)',
      'method TRACE',
      'method OPTIONS',
      'Host [',
      'Host a b',
      'Host x:99999999',
      'Host user@x',
      'Host empty',
      'Host twice',
      'Host of 4,000 characters',
      'POST body cut off (Content-Length 100, 10 sent)',
      'GET body cut off (Content-Length 100, 10 sent)',
      'POST body cut off, client gone',
      'GET body cut off, client gone',
      'chunked body with a bad chunk size',
      'Content-Length and Transfer-Encoding both',
    ],
  },
  'dashboard/express5': {
    owner: 'the dashboard’s owner (issue 23 item 2)',
    cases: [
      'target http://x:99999/ops/postback/',
      'target ftp://x/ (not http)',
      'target with dot segments',
      'target of 6,000 characters',
      'escape %ZZ in the path',
      'escape % at the end',
      'escape %E0%A4%A (cut)',
      'escape %ZZ in the query',
      'escape %00 (NUL)',
      'method TRACE',
      'Host [',
      'Host a b',
      'Host x:99999999',
      'Host user@x',
      'Host empty',
      'Host twice',
      'Host of 4,000 characters',
      'GET body cut off (Content-Length 100, 10 sent)',
    ],
  },
  'dashboard/express4': {
    owner: 'the dashboard’s owner (issue 23 item 2)',
    cases: [
      'target http://x:99999/ops/postback/',
      'target ftp://x/ (not http)',
      'target with dot segments',
      'target of 6,000 characters',
      'escape %ZZ in the path',
      'escape % at the end',
      'escape %E0%A4%A (cut)',
      'escape %ZZ in the query',
      'escape %00 (NUL)',
      'method TRACE',
      'method OPTIONS',
      'Host [',
      'Host a b',
      'Host x:99999999',
      'Host user@x',
      'Host empty',
      'Host missing (HTTP/1.1)',
      'Host twice',
      'Host of 4,000 characters',
      'POST body cut off (Content-Length 100, 10 sent)',
      'GET body cut off (Content-Length 100, 10 sent)',
      'POST body cut off, client gone',
      'GET body cut off, client gone',
      'chunked body with a bad chunk size',
    ],
  },
  'dashboard/koa': {
    owner: 'the dashboard’s owner (issue 23 item 2)',
    cases: [
      'target http://[/x',
      'target http://x:99999/ops/postback/',
      'target ftp://x/ (not http)',
      'target with dot segments',
      'target of 6,000 characters',
      'escape %ZZ in the path',
      'escape % at the end',
      'escape %E0%A4%A (cut)',
      'escape %ZZ in the query',
      'escape %00 (NUL)',
      'method TRACE',
      'Host [',
      'Host a b',
      'Host x:99999999',
      'Host user@x',
      'Host empty',
      'Host twice',
      'Host of 4,000 characters',
      'GET body cut off (Content-Length 100, 10 sent)',
    ],
  },
  'dashboard/fastify': {
    owner: 'the dashboard’s owner (issue 23 item 2)',
    cases: [
      'target with dot segments',
      'target of 6,000 characters',
      'escape %ZZ in the query',
      'escape %00 (NUL)',
      'method TRACE',
      'Host [',
      'Host a b',
      'Host x:99999999',
      'Host user@x',
      'Host empty',
      'Host twice',
      'Host of 4,000 characters',
      'GET body cut off (Content-Length 100, 10 sent)',
    ],
  },
  'dashboard/fetch': {
    owner: 'the dashboard’s owner (issue 23 item 2)',
    cases: [
      'target //[',
      'target //a:b',
      'target //:99999/',
      'target with dot segments',
      'target of 6,000 characters',
      'escape %ZZ in the path',
      'escape % at the end',
      'escape %E0%A4%A (cut)',
      'escape %ZZ in the query',
      'escape %00 (NUL)',
    ],
  },
  'sandbox/server': {
    owner: 'the sandbox’s owner (issue 23)',
    cases: [
      'escape %ZZ in the query',
      'Host [',
      'Host a b',
      'Host x:99999999',
      'Host user@x',
      'Host empty',
      'Host twice',
      'Host of 4,000 characters',
      'GET body cut off (Content-Length 100, 10 sent)',
    ],
  },
};

describe.each(SURFACES)('$mount under hostile requests', ({ mount, path, decidedByServer = [] }) => {
  const host = useHost(mount);
  const known = KNOWN_FAILURES[mount];

  const check = async (request: HostileRequest) => {
    const running = await host.ensure();
    const answer = await sendRaw(running.port, request);
    const policy = decidedByServer.includes(request.name) ? 'app' : 'refuse';
    const problem = unmet(request, answer, policy);
    // The next good request, on a fresh connection: the process lives and still serves.
    const good = await fetch(`http://127.0.0.1:${running.port}${path}`).then(
      async (response) => {
        await response.arrayBuffer();
        return `status ${response.status}`;
      },
      (error: Error) => `failed: ${error.message}`,
    );
    expect({ problem, alive: running.alive(), good }).toEqual({
      problem: null,
      alive: true,
      good: 'status 200',
    });
  };

  for (const request of hostileRequests({ path })) {
    const fails = known?.cases.includes(request.name) === true;
    const title = `${request.name}: ${request.expect}, the process lives, the next request is answered${
      fails ? ` (fails today: ${known?.owner})` : ''
    }`;
    if (fails) it.fails(title, () => check(request));
    else it(title, () => check(request));
  }
});

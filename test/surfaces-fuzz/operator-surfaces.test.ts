/**
 * The standing fuzz test of the operators' HTTP surfaces (issue 23): metrics (`/metrics`; its `/healthz`
 * and `/readyz` share the handler and have their own suite in `@postback/metrics`), the dashboard and
 * the sandbox, each in every mount style its README documents, each in a child process (`host.ts`).
 * Every hostile raw request of `test/helpers/hostile-requests.ts` must get a 4xx (or, where Node itself
 * closes the socket, nothing), the process must live, and the next good request must be answered.
 *
 * A request a mount's server decides on before the surface sees it is listed, with its reason, in that
 * surface's `decidedByServer`: there any answer below 500 is right.
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

/**
 * The dashboard's Fetch mount at the root: `@hono/node-server` resolves dot segments before building the
 * `Request` (as a WHATWG URL parser does), so the handler gets `/etc/passwd`, a well-formed path under its
 * mount, and treats it as any such path (a relative 308 to `./passwd/`, same origin). The Node mounts see
 * the target as sent and refuse it.
 */
const DASHBOARD_FETCH_SERVER_DECIDES = [...FETCH_SERVER_DECIDES, 'target with dot segments'] as const;

const SURFACES: Surface[] = [
  { mount: 'metrics/node', path: '/metrics' },
  { mount: 'metrics/serve', path: '/metrics' },
  { mount: 'metrics/fetch', path: '/metrics', decidedByServer: FETCH_SERVER_DECIDES },
  { mount: 'dashboard/node', path: '/' },
  { mount: 'dashboard/express5', path: '/ops/postback/' },
  { mount: 'dashboard/express4', path: '/ops/postback/' },
  { mount: 'dashboard/koa', path: '/ops/postback/' },
  { mount: 'dashboard/fastify', path: '/ops/postback/' },
  { mount: 'dashboard/fetch', path: '/', decidedByServer: DASHBOARD_FETCH_SERVER_DECIDES },
  { mount: 'sandbox/server', path: '/_sandbox/clock' },
];

describe.each(SURFACES)('$mount under hostile requests', ({ mount, path, decidedByServer = [] }) => {
  const host = useHost(mount);

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
    it(`${request.name}: ${request.expect}, the process lives, the next request is answered`, () =>
      check(request));
  }
});

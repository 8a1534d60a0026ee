/**
 * The HTTP face of the metrics: `/metrics` (Prometheus text), `/healthz` (the process answers: 200, with
 * the accounts paused now) and `/readyz` (200 when delivery is not paused and the outbox answers `stats`,
 * whatever single accounts are paused; 503 with a JSON reason otherwise). One fetch-style core answers every route; the `node:http` handler and the Fetch-API handler
 * only convert the request and the answer.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PrometheusMetrics, Readiness } from './prometheus.ts';

/** Options of {@link metricsHandler} and {@link metricsFetchHandler}. */
export interface MetricsHandlerOptions {
  /**
   * An extra readiness check of the application's own: `true` when ready, else a reason (503). Runs after
   * the pause and outbox checks. @defaultValue none
   */
  ready?: () => boolean | string | Promise<boolean | string>;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const json = (status: number, value: unknown): Answer => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: `${JSON.stringify(value)}\n`,
});

async function readiness(metrics: PrometheusMetrics, options: MetricsHandlerOptions): Promise<Readiness> {
  const own = await metrics.readiness();
  if (!own.ready || options.ready === undefined) return own;
  try {
    const extra = await options.ready();
    return extra === true ? own : { ready: false, reason: 'not-ready', detail: String(extra || 'not ready') };
  } catch (error) {
    return {
      ready: false,
      reason: 'not-ready',
      detail: error instanceof Error ? error.message : String(error),
    };
  }
}

/** The answer to `method path`. */
async function answer(
  metrics: PrometheusMetrics,
  options: MetricsHandlerOptions,
  method: string,
  path: string,
): Promise<Answer> {
  const route = path === '/metrics' || path === '/healthz' || path === '/readyz';
  if (!route) return json(404, { error: 'not found', routes: ['/metrics', '/healthz', '/readyz'] });
  if (method !== 'GET' && method !== 'HEAD')
    return { ...json(405, { error: 'method not allowed' }), headers: { allow: 'GET, HEAD' } };
  if (path === '/healthz') {
    // Accounts paused one by one do not make the process unhealthy nor unready: listed for operators.
    const pausedAccounts = metrics.pausedAccounts().map((a) => ({
      account: a.account,
      status: a.status,
      reason: a.reason,
      since: new Date(a.since).toISOString(),
    }));
    return json(200, { alive: true, pausedAccounts });
  }
  if (path === '/readyz') {
    const r = await readiness(metrics, options);
    return json(r.ready ? 200 : 503, r);
  }
  return {
    status: 200,
    headers: { 'content-type': metrics.contentType, 'cache-control': 'no-store' },
    body: await metrics.scrape(),
  };
}

/**
 * A `node:http` request listener serving `/metrics`, `/healthz` and `/readyz`.
 *
 * @example
 * ```ts
 * import http from 'node:http';
 * http.createServer(metricsHandler(metrics)).listen(9464, '127.0.0.1');
 * ```
 */
export function metricsHandler(
  metrics: PrometheusMetrics,
  options: MetricsHandlerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    answer(metrics, options, req.method ?? 'GET', path).then(
      (a) => {
        res.writeHead(a.status, a.headers);
        res.end(req.method === 'HEAD' ? undefined : a.body);
      },
      (error: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`metrics failed: ${error instanceof Error ? error.message : String(error)}\n`);
      },
    );
  };
}

/**
 * The same routes as a Fetch-API handler (`Request` → `Response`), for Bun, Deno or a Hono route.
 *
 * @example
 * ```ts
 * Bun.serve({ port: 9464, fetch: metricsFetchHandler(metrics) });
 * ```
 */
export function metricsFetchHandler(
  metrics: PrometheusMetrics,
  options: MetricsHandlerOptions = {},
): (request: Request) => Promise<Response> {
  return async (request) => {
    const a = await answer(metrics, options, request.method, new URL(request.url).pathname);
    return new Response(request.method === 'HEAD' ? null : a.body, { status: a.status, headers: a.headers });
  };
}

/** A running metrics server. */
export interface MetricsServer {
  /** `http://host:port` it listens on. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Starts a `node:http` server for {@link metricsHandler} on `host` (default loopback) and `port` (0: a free one).
 *
 * @example
 * ```ts
 * const server = await serveMetrics(metrics, { port: 9464 });
 * // ... on shutdown:
 * await server.close();
 * ```
 */
export async function serveMetrics(
  metrics: PrometheusMetrics,
  options: MetricsHandlerOptions & { port: number; host?: string },
): Promise<MetricsServer> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer(metricsHandler(metrics, options));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/**
 * The HTTP face of the metrics: `/metrics` (Prometheus text), `/healthz` (the process answers: 200, with
 * the accounts paused now) and `/readyz` (200 when delivery is not paused and the outbox answers `stats`,
 * whatever single accounts are paused; 503 with a JSON reason otherwise). One fetch-style core answers
 * every route; the `node:http` handler and the Fetch-API handler only convert the request and the answer.
 *
 * Whatever a client sends gets an answer, never an exception: a malformed target, `Host`, method or body
 * is a 4xx, reported to `onClientError`; a failing scrape is a 500.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { isHostValue, parseRequestTarget } from '@postback/core/store';
import type { PrometheusMetrics, Readiness } from './prometheus.ts';

/** Why a request was refused with a 4xx. */
export type MetricsClientErrorReason =
  /** The target is not `/path?query` nor `http(s)://host/path`, or holds a bad `%` escape. */
  | 'bad-target'
  /** `Host` missing (HTTP/1.1), repeated or malformed. */
  | 'bad-host'
  | 'not-found'
  | 'method-not-allowed'
  /** A `GET` or `HEAD` that carries a body. */
  | 'body-not-allowed'
  /** Node's HTTP parser refused the bytes (`code` says why): bad syntax, headers too large, too slow. */
  | 'bad-request';

/** A request refused with a 4xx (or a connection the client broke), as given to `onClientError`. */
export interface MetricsClientError {
  /** The status answered; null when no answer could be sent (the client was gone). */
  status: number | null;
  reason: MetricsClientErrorReason;
  /** The method as sent, when the request got that far. */
  method?: string;
  /** The target as sent, cut at 200 characters. */
  target?: string;
  /** Node's error code, for `bad-request`. */
  code?: string;
}

/** Options of {@link metricsHandler} and {@link metricsFetchHandler}. */
export interface MetricsHandlerOptions {
  /**
   * An extra readiness check of the application's own: `true` when ready, else a reason (503). Runs after
   * the pause and outbox checks. @defaultValue none
   */
  ready?: () => boolean | string | Promise<boolean | string>;
  /**
   * Called for each request refused with a 4xx, to log it as a client error (the worker logs
   * `metrics.client-error` at warn). What it throws is ignored. @defaultValue none (nothing logged)
   */
  onClientError?: (error: MetricsClientError) => void;
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

/** A 4xx that ends the connection (what is left of the request on it cannot be trusted). */
const refusal = (
  status: number,
  body: { error: string; routes?: string[] },
  headers: Record<string, string> = {},
): Answer => {
  const a = json(status, body);
  return { ...a, headers: { ...a.headers, ...headers, connection: 'close' } };
};

const ROUTES = ['/metrics', '/healthz', '/readyz'];

function report(options: MetricsHandlerOptions, error: MetricsClientError): void {
  try {
    options.onClientError?.(error);
  } catch {
    // A broken logger must not turn a client's mistake into the host's crash.
  }
}

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

/** A request past its target and `Host` checks. */
interface Incoming {
  method: string;
  /** The target as sent (for reports). */
  target: string;
  /** Its path, as sent (not decoded). */
  path: string;
  hasBody: boolean;
}

/** The answer to a request whose target and `Host` are well-formed. */
async function answer(
  metrics: PrometheusMetrics,
  options: MetricsHandlerOptions,
  request: Incoming,
): Promise<Answer> {
  const { method, path } = request;
  const refuse = (
    status: number,
    reason: MetricsClientErrorReason,
    body: { error: string; routes?: string[] },
    headers?: Record<string, string>,
  ): Answer => {
    report(options, { status, reason, method, target: request.target.slice(0, 200) });
    return refusal(status, body, headers);
  };
  if (!ROUTES.includes(path)) return refuse(404, 'not-found', { error: 'not found', routes: ROUTES });
  if (method !== 'GET' && method !== 'HEAD')
    return refuse(405, 'method-not-allowed', { error: 'method not allowed' }, { allow: 'GET, HEAD' });
  if (request.hasBody) return refuse(400, 'body-not-allowed', { error: `a ${method} request has no body` });
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

/** The 500 of a scrape or readiness check that failed (not the client's doing). */
const failure = (error: unknown): Answer => ({
  status: 500,
  headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
  body: `metrics failed: ${error instanceof Error ? error.message : String(error)}\n`,
});

/** Whether the request's `Host` is one well-formed value (none is fine before HTTP/1.1). */
function hostIsValid(req: IncomingMessage): boolean {
  const hosts: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]?.toLowerCase() === 'host') hosts.push(req.rawHeaders[i + 1] ?? '');
  }
  if (hosts.length === 0) return req.httpVersionMajor < 1 || req.httpVersion === '1.0';
  return hosts.length === 1 && isHostValue(hosts[0] as string);
}

const ignore = () => {};

/**
 * A `node:http` request listener serving `/metrics`, `/healthz` and `/readyz`. A malformed target or
 * `Host`, another method, or a `GET` with a body gets a 4xx (reported to `onClientError`); nothing a
 * client sends makes it throw or reject.
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
    // A client that leaves mid-request or mid-answer is no error of ours.
    req.on('error', ignore);
    res.on('error', ignore);
    const method = req.method ?? '';
    const target = req.url ?? '';
    const path = parseRequestTarget(target)?.path ?? null;
    const refuse = (reason: MetricsClientErrorReason, error: string): Answer => {
      report(options, { status: 400, reason, method, target: target.slice(0, 200) });
      return refusal(400, { error });
    };
    const pending: Promise<Answer> =
      path === null
        ? Promise.resolve(refuse('bad-target', 'bad request target'))
        : !hostIsValid(req)
          ? Promise.resolve(refuse('bad-host', 'bad Host header'))
          : answer(metrics, options, {
              method,
              target,
              path,
              hasBody:
                req.headers['transfer-encoding'] !== undefined ||
                (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0'),
            });
    pending
      .catch(failure)
      .then((a) => {
        if (res.headersSent || res.destroyed) return;
        res.writeHead(a.status, a.headers);
        res.end(method === 'HEAD' ? undefined : a.body);
      })
      .catch(() => res.destroy());
  };
}

/**
 * The same routes as a Fetch-API handler (`Request` → `Response`), for Bun, Deno or a Hono route. It
 * never rejects: a bad target is a 400, a failed scrape a 500.
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
    const { method } = request;
    let a: Answer;
    try {
      const url = new URL(request.url);
      const target = url.pathname + url.search;
      const path = parseRequestTarget(target)?.path ?? null;
      if (path === null) {
        report(options, { status: 400, reason: 'bad-target', method, target: target.slice(0, 200) });
        a = refusal(400, { error: 'bad request target' });
      } else {
        a = await answer(metrics, options, { method, target, path, hasBody: request.body !== null });
      }
    } catch (error) {
      a = failure(error);
    }
    return new Response(method === 'HEAD' ? null : a.body, { status: a.status, headers: a.headers });
  };
}

/** A running metrics server. */
export interface MetricsServer {
  /** `http://host:port` it listens on. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Node's parser errors as answers: the status, and the bytes written on the socket. */
function parserAnswer(code: string | undefined): { status: number; raw: string } {
  const status =
    code === 'HPE_HEADER_OVERFLOW'
      ? 431
      : code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 408
        : code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
          ? 413
          : 400;
  const text = {
    400: 'Bad Request',
    408: 'Request Timeout',
    413: 'Payload Too Large',
    431: 'Request Header Fields Too Large',
  }[status];
  return { status, raw: `HTTP/1.1 ${status} ${text}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n` };
}

/**
 * Starts a `node:http` server for {@link metricsHandler} on `host` (default loopback) and `port` (0: a
 * free one). Beyond the handler's own refusals, it answers what Node's parser refuses (bad syntax: 400,
 * headers too large: 431, too slow: 408) and `CONNECT` (405), and reports each to `onClientError`.
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
  // The handler checks `Host` itself, so a missing one is reported like a malformed one.
  const server = createServer({ requireHostHeader: false }, metricsHandler(metrics, options));
  server.on('clientError', (error: Error & { code?: string }, socket: Socket) => {
    socket.on('error', ignore);
    // A client that hung up was not refused anything; an answer already begun cannot be replaced.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    const canAnswer = error.code !== 'ECONNRESET' && socket.writable && inFlight?.headersSent !== true;
    const { status, raw } = parserAnswer(error.code);
    if (error.code !== 'ECONNRESET') {
      report(options, {
        status: canAnswer ? status : null,
        reason: 'bad-request',
        ...(error.code === undefined ? {} : { code: error.code }),
      });
    }
    if (canAnswer) socket.end(raw);
    socket.destroySoon();
  });
  // Without a listener Node drops a CONNECT silently; answer it like any other method.
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    socket.on('error', ignore);
    report(options, {
      status: 405,
      reason: 'method-not-allowed',
      method: 'CONNECT',
      target: (req.url ?? '').slice(0, 200),
    });
    socket.end(
      'HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Once listening, a failed accept (out of file descriptors under a flood) must not end the host.
  server.on('error', ignore);
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

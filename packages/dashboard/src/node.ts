/**
 * The Node adapter: turns a `node:http` request into a Fetch `Request`, calls the handler, and writes
 * its `Response`. Structural types only, so it mounts in `http.createServer`, Express, Koa (`ctx.req`,
 * `ctx.res`) and Fastify (`request.raw`, `reply.raw`) without importing any of them.
 *
 * Its promise never rejects, whatever arrives: a method the Fetch API refuses (TRACE, CONNECT), a `Host`
 * or target no URL parser takes (the target is read as sent, by `request-target.ts`), a GET with a body
 * that never comes, a body cut off by a client that went away. A malformed request is answered with a
 * 4xx before any `Request` is built; an error past that point ends the response instead
 * of reaching the host process. A body a framework has already read (`express.json()`, Fastify) is
 * taken from `req.body`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_BODY_BYTES } from './action-body.ts';
import { ClientError, refusal } from './answers.ts';
import type { DashboardHandler } from './handler.ts';
import { parseHost } from './host-check.ts';
import { type DashboardRequestError, logRequestError } from './request-log.ts';
import { readTarget } from './request-target.ts';

/**
 * A Node request. Express's carries `originalUrl` (the path before its mount point was stripped); a body
 * parser that ran before the dashboard leaves the body in `body` (Fastify: pass `request.body` there).
 */
export type NodeRequest = IncomingMessage & { originalUrl?: string; body?: unknown };

/** A Node `(req, res)` handler; its promise never rejects. */
export type NodeDashboardHandler = (req: NodeRequest, res: ServerResponse) => Promise<void>;

/** Methods the dashboard serves; any other is a 405 before a `Request` is built (the Fetch API throws on TRACE). */
const METHODS = new Set(['GET', 'HEAD', 'POST']);

/** The `Host` the request names: exactly one, and a valid host (RFC 9112 §3.2). */
function hostOf(req: NodeRequest): string {
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    if (req.rawHeaders[i]?.toLowerCase() === 'host') count += 1;
  if (count > 1) throw new ClientError(400, 'more than one Host header');
  const host = req.headers.host;
  if (host === undefined) {
    if (req.httpVersion === '1.0') return 'localhost';
    throw new ClientError(400, 'the Host header is missing');
  }
  if (parseHost(host) === null) throw new ClientError(400, 'the Host header is not a valid host');
  return host;
}

/** Whether the request carries a body (a length above zero, or any transfer coding). */
const hasBody = (req: NodeRequest): boolean =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/** The body a framework parsed already, as bytes; a parsed object is sent on as JSON. */
function parsedBody(body: unknown): Uint8Array<ArrayBuffer> {
  if (body === undefined) {
    throw new ClientError(400, 'the body was read before the dashboard saw it: pass it as req.body');
  }
  if (typeof body === 'string') return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return new Uint8Array(body);
  let text: string | undefined;
  try {
    text = JSON.stringify(body);
  } catch {
    text = undefined;
  }
  if (text === undefined) throw new ClientError(400, 'the body must be JSON');
  return new TextEncoder().encode(text);
}

/** The body from the stream, at most {@link MAX_BODY_BYTES}; null when the client went away first. */
async function streamBody(req: IncomingMessage): Promise<Uint8Array<ArrayBuffer> | null> {
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES)
    throw new ClientError(413, 'the body is too large');
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) throw new ClientError(413, 'the body is too large');
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    if (error instanceof ClientError) throw error;
    return null; // aborted, reset, a bad chunk: nobody is left to answer
  }
  return new Uint8Array(Buffer.concat(chunks));
}

/** Writes `response`, or gives up quietly when the client has gone. */
async function send(res: ServerResponse, response: Response, close = false): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  if (res.destroyed || res.writableEnded) return;
  if (res.headersSent) {
    res.end();
    return;
  }
  const headers: Record<string, string> = Object.fromEntries(response.headers);
  if (close) headers.connection = 'close';
  res.writeHead(response.status, headers);
  res.end(body);
}

/**
 * Wraps a Fetch-API handler as a Node `(req, res)` handler whose promise never rejects. Requests it
 * refuses itself (before the handler runs) are told to `onRequestError` as client errors.
 *
 * @example
 * ```ts
 * http.createServer(toNodeHandler(handle)).listen(8080, '127.0.0.1');
 * ```
 */
export function toNodeHandler(
  handle: DashboardHandler,
  options: { onRequestError?: (error: DashboardRequestError) => void } = {},
): NodeDashboardHandler {
  const tell = options.onRequestError ?? logRequestError;
  return async (req, res) => {
    const context = { remoteAddress: req.socket?.remoteAddress, localAddress: req.socket?.localAddress };
    try {
      const method = req.method ?? 'GET';
      if (!METHODS.has(method)) {
        throw new ClientError(405, 'method not allowed', { allow: 'GET, HEAD, POST' });
      }
      const host = hostOf(req);
      // Checked as sent: a URL parser would resolve dot segments and throw on what it cannot take.
      const { path, search } = readTarget(req.originalUrl ?? req.url ?? '/');
      // A GET or HEAD has no body: one that claims to (its bytes perhaps never coming) is refused at once.
      if (method !== 'POST' && hasBody(req)) throw new ClientError(400, `a ${method} request has no body`);
      const url = new URL(`http://${host}${path}${search}`);
      let body: Uint8Array<ArrayBuffer> | null = null;
      if (method === 'POST') {
        const consumed = req.readableDidRead || req.readableEnded;
        body = consumed ? parsedBody(req.body) : await streamBody(req);
        if (body === null) {
          res.destroy();
          return;
        }
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
      }
      if (body !== null) headers.set('content-length', String(body.byteLength));
      const response = await handle(new Request(url, { method, headers, body }), context);
      await send(res, response);
    } catch (error) {
      // A refusal before the handler ran (it never throws): answered here, the connection closed when
      // the request's body may be left unread.
      const refused = error instanceof ClientError ? error : new ClientError(400, 'the request is malformed');
      try {
        tell({ kind: 'client', status: refused.status, message: refused.message });
      } catch {
        // a logger that throws changes nothing
      }
      await send(res, refusal(refused), true).catch(() => res.destroy());
    }
  };
}

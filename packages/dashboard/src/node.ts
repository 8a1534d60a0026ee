/**
 * The Node adapter: turns a `node:http` request into a Fetch `Request`, calls the handler, and writes
 * its `Response`. Structural types only, so it mounts in `http.createServer`, Express, Koa (`ctx.req`,
 * `ctx.res`) and Fastify (`request.raw`, `reply.raw`) without importing any of them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DashboardHandler } from './handler.ts';

/** Largest request body read (replay and purge bodies are a list of ids). */
const MAX_BODY_BYTES = 256 * 1024;

/** A Node request; Express's carries `originalUrl` (the path before its mount point was stripped). */
export type NodeRequest = IncomingMessage & { originalUrl?: string };

/** A Node `(req, res)` handler. */
export type NodeDashboardHandler = (req: NodeRequest, res: ServerResponse) => Promise<void>;

async function readBody(req: IncomingMessage): Promise<Uint8Array<ArrayBuffer> | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

/**
 * Wraps a Fetch-API handler as a Node `(req, res)` handler.
 *
 * @example
 * ```ts
 * http.createServer(toNodeHandler(handle)).listen(8080, '127.0.0.1');
 * ```
 */
export function toNodeHandler(handle: DashboardHandler): NodeDashboardHandler {
  return async (req, res) => {
    const method = req.method ?? 'GET';
    const url = new URL(req.originalUrl ?? req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
    }
    let body: Uint8Array<ArrayBuffer> | null = null;
    if (method !== 'GET' && method !== 'HEAD') {
      body = await readBody(req);
      if (body === null) {
        res.writeHead(413, { 'content-type': 'application/json' }).end('{"error":"body too large"}');
        return;
      }
    }
    const response = await handle(new Request(url, { method, headers, body }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  };
}

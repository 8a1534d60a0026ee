/**
 * Transport over an undici `Pool` per origin: keep-alive connections and `Pool.request`, which on Node
 * moves small JSON several times faster than the global `fetch` (measured when it was chosen: see the README).
 * Node only: this module imports `undici`, so only the `node` condition of `#transport` reaches it (Bun
 * and Deno match their own conditions first and get the fetch transport). Bun answers `import 'undici'`
 * with a placeholder whose `Pool` has no `close` and whose `request` returns nothing: this transport
 * checks for that before sending and throws {@link TransportUnavailable} rather than a connection error.
 */
import { type Dispatcher, Pool } from 'undici';
import { type BoundedBody, readBoundedBody } from './bounded-body.ts';
import type { Transport, TransportRequest, TransportResponse, TransportSettings } from './types.ts';
import { BodyReadError } from './types.ts';
import { TransportUnavailable } from './unavailable.ts';

/** What is missing from this runtime's `undici` for the transport to work, or null when nothing is. */
function missingUndiciApi(): string | null {
  const proto = typeof Pool === 'function' ? (Pool.prototype as Partial<Pool> | undefined) : undefined;
  if (proto === undefined) return 'undici has no Pool class';
  if (typeof proto.request !== 'function') return 'undici Pool has no request()';
  if (typeof proto.close !== 'function') return 'undici Pool has no close() (not the real undici)';
  return null;
}

/**
 * A transport with one keep-alive `Pool` per origin.
 *
 * @example
 * ```ts
 * const transport = createUndiciTransport({ connections: 64 });
 * await transport.close();
 * ```
 */
export function createUndiciTransport(settings: TransportSettings): Transport {
  const pools = new Map<string, Pool>();
  const poolFor = (origin: string): Pool => {
    let pool = pools.get(origin);
    if (pool === undefined) {
      pool = new Pool(origin, { connections: settings.connections, pipelining: 1 });
      pools.set(origin, pool);
    }
    return pool;
  };
  const missing = missingUndiciApi();
  return {
    name: 'undici',
    async send(request: TransportRequest): Promise<TransportResponse> {
      if (missing !== null) {
        throw new TransportUnavailable('undici', `the undici transport cannot work here: ${missing}`, false);
      }
      let response: Dispatcher.ResponseData;
      try {
        response = await poolFor(request.url.origin).request({
          method: request.method,
          path: `${request.url.pathname}${request.url.search}`,
          headers: request.headers,
          body: request.body,
          signal: request.signal,
        });
      } catch (err) {
        // undici checks its arguments before dispatching: an invalid one never left, and never will.
        if ((err as { code?: unknown } | null)?.code === 'UND_ERR_INVALID_ARG') {
          const why = `the undici transport cannot work here: ${(err as Error).message}`;
          throw new TransportUnavailable('undici', why, false, err);
        }
        throw err;
      }
      if (
        typeof response?.statusCode !== 'number' ||
        typeof response.body?.[Symbol.asyncIterator] !== 'function'
      ) {
        // Something answered that is not undici's response: whether it sent anything is unknown.
        throw new TransportUnavailable(
          'undici',
          'the undici transport cannot work here: no response object',
          true,
        );
      }
      let body: BoundedBody;
      try {
        body = await readUndiciBody(response, request.maxBodyBytes);
      } catch (err) {
        if (request.signal.aborted) throw err;
        throw new BodyReadError(response.statusCode, err);
      }
      return {
        status: response.statusCode,
        retryAfter: headerOf(response, 'retry-after'),
        body: body.text,
        oversized: body.oversized,
      };
    },
    async close() {
      const all = [...pools.values()];
      pools.clear();
      // Nothing to close when the Pool class is a placeholder (no pool ever sent anything).
      await Promise.all(all.map((pool) => (typeof pool.close === 'function' ? pool.close() : undefined)));
    },
  };
}

/** One header's value (the first when repeated), or null. */
function headerOf(response: Dispatcher.ResponseData, name: string): string | null {
  const value = response.headers[name];
  return typeof value === 'string' ? value : (value?.[0] ?? null);
}

/**
 * An undici response's body, read up to `maxBytes`. Past it the body is destroyed: undici then closes the
 * connection (a half-read answer cannot be reused), so the server stops sending.
 */
function readUndiciBody(response: Dispatcher.ResponseData, maxBytes: number): Promise<BoundedBody> {
  const chunks = response.body[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  return readBoundedBody(
    {
      read: async () => {
        const next = await chunks.next();
        return next.done === true ? undefined : next.value;
      },
      cancel: () => {
        response.body.destroy();
      },
    },
    maxBytes,
    headerOf(response, 'content-length'),
  );
}

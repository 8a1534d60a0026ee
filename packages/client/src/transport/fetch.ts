/**
 * Transport over a WHATWG `fetch`: the global one on edge runtimes, or one the caller injects.
 * Keep-alive is the runtime's business (Node's global fetch keeps connections alive by default).
 */

import { type BoundedBody, readBoundedBody } from './bounded-body.ts';
import type { Transport, TransportRequest, TransportResponse } from './types.ts';
import { BodyReadError } from './types.ts';
import { TransportUnavailable } from './unavailable.ts';

/**
 * A transport that sends with `fetchFn`.
 *
 * @example
 * ```ts
 * const transport = createFetchTransport(globalThis.fetch);
 * ```
 */
export function createFetchTransport(fetchFn: typeof globalThis.fetch): Transport {
  return {
    name: 'fetch',
    async send(request: TransportRequest): Promise<TransportResponse> {
      if (typeof fetchFn !== 'function') {
        throw new TransportUnavailable(
          'fetch',
          'the fetch transport cannot work here: no fetch function',
          false,
        );
      }
      const init: RequestInit = {
        method: request.method,
        headers: request.headers,
        signal: request.signal,
        // Never follow: a redirect answers like any other non-2xx (as on the undici transport), and the
        // bearer key is never replayed to another location.
        redirect: 'manual',
      };
      if (request.body !== undefined) init.body = request.body;
      const response = await fetchFn(request.url, init);
      let body: BoundedBody;
      try {
        body = await readFetchBody(response, request.maxBodyBytes);
      } catch (err) {
        if (request.signal.aborted) throw err;
        throw new BodyReadError(response.status, err);
      }
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: body.text,
        oversized: body.oversized,
      };
    },
    async close() {},
  };
}

/** A fetch response's body, read up to `maxBytes` (past it the reader is cancelled, which ends the connection). */
function readFetchBody(response: Response, maxBytes: number): Promise<BoundedBody> {
  if (response.body === null) return Promise.resolve({ text: '', oversized: false });
  const reader = response.body.getReader();
  return readBoundedBody(
    { read: async () => (await reader.read()).value, cancel: () => reader.cancel() },
    maxBytes,
    response.headers.get('content-length'),
  );
}

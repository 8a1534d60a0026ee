/**
 * The transport seam: how one HTTP request leaves the process. The client owns validation, timeouts,
 * retries and error mapping; a transport only sends bytes and reads the response body, up to a bound
 * (through `readBoundedBody`, which cancels a body past it).
 */

/** One request, fully prepared (URL resolved, headers including authorization, body serialised). */
export interface TransportRequest {
  method: 'GET' | 'POST';
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
  /** Aborted on timeout or by the caller; the transport must stop sending and reading. */
  signal: AbortSignal;
  /** Most bytes of the response body to read: past it the transport cancels the body (`oversized`). */
  maxBodyBytes: number;
}

/** A response whose body has been read to the end, or cut at the bound. */
export interface TransportResponse {
  status: number;
  /** Raw `Retry-After` header, or null. */
  retryAfter: string | null;
  /** The body's text; empty when `oversized`. */
  body: string;
  /** The body was longer than `maxBodyBytes`: it was not read past the bound, and its connection closed. */
  oversized: boolean;
}

/**
 * Sends requests. `close()` releases kept-alive connections.
 *
 * @example
 * ```ts
 * const transport = createFetchTransport(fetch);
 * const res = await transport.send({ method: 'GET', url, headers, body: undefined, signal });
 * ```
 */
export interface Transport {
  /** Short name shown by `client.transport` (`undici`, `fetch`). */
  readonly name: string;
  send(request: TransportRequest): Promise<TransportResponse>;
  close(): Promise<void>;
}

/** Settings a default transport may use. */
export interface TransportSettings {
  /** Keep-alive connections per origin. */
  connections: number;
}

/**
 * Thrown by a transport when the response head arrived but its body did not arrive whole
 * (connection reset or closed mid-body). The client maps it to a retryable `ConnectionError`.
 */
export class BodyReadError extends Error {
  override name = 'BodyReadError';
  readonly status: number;
  constructor(status: number, cause: unknown) {
    super(`response body (status ${status}) was cut off`, { cause });
    this.status = status;
  }
}

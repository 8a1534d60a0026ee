/**
 * How failures surface, over real HTTP on both transports: status codes through `errorFromResponse`,
 * malformed and cut-off bodies, connection resets, timeouts, caller aborts, and the GET-only retry policy
 * that honours Retry-After.
 */

import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AdServiceClient,
  AdServiceError,
  AuthenticationError,
  type ClientOptions,
  ConflictError,
  ConnectionError,
  createClient,
  HttpError,
  InvalidResponseError,
  NotFoundError,
  PaymentRequiredError,
  PermissionError,
  RateLimitError,
  ServerError,
  TimeoutError,
} from '../src/index.ts';
import { confirmation } from './helpers/fixtures.ts';
import { type Handler, sendJson, startServer, type TestServer } from './helpers/server.ts';

const CONFIRM = { click_token: 'tok_abcdefghijklmnopqrstuvwx', order_id: 'ord_1', value_micros: 1_000_000 };
const ME = { account_id: 'acct_1', scopes: ['read'] };

const transports = [
  { name: 'the default transport', fetch: undefined },
  {
    name: 'an injected fetch',
    fetch: (input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init),
  },
];

async function failure(promise: Promise<unknown>): Promise<AdServiceError> {
  const err = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AdServiceError);
  return err as AdServiceError;
}

describe.each(transports)('failures over $name', ({ fetch }) => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
  });

  async function setup(
    handler: Handler,
    options: Partial<ClientOptions> = {},
  ): Promise<{ server: TestServer; client: AdServiceClient }> {
    const server = await startServer(handler);
    open.push(server);
    const client = createClient({
      baseUrl: server.url,
      apiKey: 'pbsk_failures',
      retry: { retries: 2, minDelay: 1, maxDelay: 2_000 },
      ...(fetch ? { fetch } : {}),
      ...options,
    });
    open.push(client);
    return { server, client };
  }

  it.each([
    [401, AuthenticationError, 'unauthorized', false],
    [402, PaymentRequiredError, 'payment_required', false],
    [403, PermissionError, 'forbidden', false],
    [404, NotFoundError, 'not_found', false],
    [409, ConflictError, 'conflict', false],
    [422, ConflictError, 'conflict', false],
    [400, HttpError, 'http', false],
    [408, HttpError, 'http', true],
    [500, ServerError, 'server', true],
    [503, ServerError, 'server', true],
  ] as const)(
    'maps a %i answer to %o with code %s, keeping the service detail',
    async (status, type, code, retryable) => {
      const { client } = await setup((_req, res) => sendJson(res, status, { detail: `because ${status}` }), {
        retry: false,
      });
      const err = await failure(client.conversions.confirm(CONFIRM));
      expect(err).toBeInstanceOf(type);
      expect(err).toMatchObject({ code, status, retryable, detail: `because ${status}` });
    },
  );

  it('a redirect is not followed: it is a non-retryable HttpError and only one request is made', async () => {
    const { server, client } = await setup((_req, res) => {
      res.writeHead(302, { location: '/elsewhere', 'content-length': '0' });
      res.end();
    });
    const err = await failure(client.me.get());
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({ status: 302, retryable: false });
    expect(server.requests.map((r) => r.path)).toEqual(['/v1/me']);
  });

  it('a 429 carries retryAfterMs from Retry-After and is retryable', async () => {
    const { client } = await setup((_req, res) =>
      sendJson(res, 429, { detail: 'slow down' }, { 'retry-after': '7' }),
    );
    const err = await failure(client.conversions.confirm(CONFIRM));
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfterMs).toBe(7_000);
    expect(err.retryable).toBe(true);
  });

  it('an error body that is not JSON still gives the typed error with an HTTP detail', async () => {
    const { client } = await setup(
      (_req, res) => {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html>bad gateway</html>');
      },
      { retry: false },
    );
    const err = await failure(client.me.get());
    expect(err).toBeInstanceOf(ServerError);
    expect(err.detail).toBe('HTTP 502');
  });

  it('a 2xx body that is not JSON is an InvalidResponseError', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"order_id": "ord_1", ');
    });
    const err = await failure(client.conversions.confirm(CONFIRM));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err).toMatchObject({ code: 'invalid_response', status: 200, retryable: true });
  });

  it('a 2xx body of the wrong shape is an InvalidResponseError naming the field', async () => {
    const { client } = await setup((_req, res) =>
      sendJson(res, 200, { ...confirmation, value_micros: 12.34 }),
    );
    const err = await failure(client.conversions.confirm(CONFIRM));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.detail).toMatch(/^value_micros: /);
    expect(err.retryable).toBe(false);
  });

  it('an empty 2xx body is an InvalidResponseError', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(200, { 'content-length': '0' });
      res.end();
    });
    expect(await failure(client.me.get({}))).toBeInstanceOf(InvalidResponseError);
  });

  it('a response cut off before its announced length is a retryable ConnectionError', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"order_id":"ord_1",');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const err = await failure(client.conversions.confirm(CONFIRM));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.retryable).toBe(true);
    // No complete answer arrived: a status here would read as "the service answered 200".
    expect(err.status).toBeNull();
  });

  it('a connection reset before any answer is a retryable ConnectionError, and the POST is not retried', async () => {
    const { server, client } = await setup((req) => {
      req.headers; // the request arrived; now drop the connection without answering
      throw new Error('reset');
    });
    const err = await failure(client.conversions.confirm(CONFIRM));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.retryable).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('a refused connection is a retryable ConnectionError', async () => {
    const port = await freePort();
    const client = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'pbsk_failures',
      retry: false,
      ...(fetch ? { fetch } : {}),
    });
    open.push(client);
    const err = await failure(client.me.get());
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.status).toBeNull();
  });

  it('a server that never answers gives a TimeoutError after the configured timeout', async () => {
    const { client } = await setup(() => {}, { timeout: 150, retry: false });
    const started = performance.now();
    const err = await failure(client.conversions.confirm(CONFIRM));
    const took = performance.now() - started;
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ code: 'timeout', retryable: true, status: null });
    expect(took).toBeGreaterThanOrEqual(140);
    expect(took).toBeLessThan(2_000);
  });

  it('a per-call timeout overrides the client timeout', async () => {
    const { client } = await setup(() => {}, { timeout: 30_000, retry: false });
    const started = performance.now();
    expect(await failure(client.me.get({ timeout: 100 }))).toBeInstanceOf(TimeoutError);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('a body that stalls mid-way times out too', async () => {
    const { client } = await setup(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
        res.write('{"account_id":');
      },
      { timeout: 150, retry: false },
    );
    expect(await failure(client.me.get())).toBeInstanceOf(TimeoutError);
  });

  it('a caller abort rejects with the signal reason and is not retried', async () => {
    const controller = new AbortController();
    const reason = new Error('user went away');
    // The server never answers; the caller gives up once the request has arrived.
    const { server, client } = await setup(() => controller.abort(reason));
    await expect(client.me.get({ signal: controller.signal })).rejects.toBe(reason);
    expect(server.requests).toHaveLength(1);
  });

  it('an already aborted signal sends nothing', async () => {
    const { server, client } = await setup((_req, res) => sendJson(res, 200, ME));
    await expect(client.me.get({ signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(server.requests).toHaveLength(0);
  });

  it('retries an idempotent GET after 5xx and returns the later success', async () => {
    const { server, client } = await setup((_req, res, i) =>
      i < 2 ? sendJson(res, 503, { detail: 'busy' }) : sendJson(res, 200, ME),
    );
    expect(await client.me.get()).toEqual(ME);
    expect(server.requests).toHaveLength(3);
  });

  it('gives up after the configured number of GET retries with the last error', async () => {
    const { server, client } = await setup((_req, res) => sendJson(res, 500, { detail: 'down' }));
    expect(await failure(client.segments.list())).toBeInstanceOf(ServerError);
    expect(server.requests).toHaveLength(3);
  });

  it('never retries a POST, even on a retryable 503', async () => {
    const { server, client } = await setup((_req, res) => sendJson(res, 503, { detail: 'busy' }));
    expect(await failure(client.conversions.confirm(CONFIRM))).toBeInstanceOf(ServerError);
    expect(await failure(client.sites.verify('site_1'))).toBeInstanceOf(ServerError);
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry a GET that failed for a non-retryable reason', async () => {
    const { server, client } = await setup((_req, res) =>
      sendJson(res, 404, { detail: 'no such placement' }),
    );
    expect(await failure(client.placements.live('plc_1'))).toBeInstanceOf(NotFoundError);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a GET after a timeout and a connection reset', async () => {
    const { server, client } = await setup(
      (_req, res, i) => {
        if (i === 0) return; // hang: times out
        if (i === 1) throw new Error('reset');
        sendJson(res, 200, ME);
      },
      { timeout: 150 },
    );
    expect(await client.me.get()).toEqual(ME);
    expect(server.requests).toHaveLength(3);
  });

  it('waits as long as Retry-After asks before retrying a rate-limited GET', async () => {
    const { server, client } = await setup((_req, res, i) =>
      i === 0 ? sendJson(res, 429, { detail: 'slow down' }, { 'retry-after': '1' }) : sendJson(res, 200, ME),
    );
    const started = performance.now();
    expect(await client.me.get()).toEqual(ME);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(server.requests).toHaveLength(2);
  });

  it('honours Retry-After on a 503 too before retrying a GET', async () => {
    const { server, client } = await setup((_req, res, i) =>
      i === 0
        ? sendJson(res, 503, { detail: 'maintenance' }, { 'retry-after': '1' })
        : sendJson(res, 200, ME),
    );
    const started = performance.now();
    expect(await client.me.get()).toEqual(ME);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(server.requests).toHaveLength(2);
  });

  it('surfaces the 429 at once when Retry-After is longer than the longest retry delay', async () => {
    const { server, client } = await setup((_req, res) =>
      sendJson(res, 429, { detail: 'later' }, { 'retry-after': '120' }),
    );
    const started = performance.now();
    const err = await failure(client.me.get());
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfterMs).toBe(120_000);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(server.requests).toHaveLength(1);
  });

  it('retry: false turns GET retries off', async () => {
    const { server, client } = await setup((_req, res) => sendJson(res, 503, { detail: 'busy' }), {
      retry: false,
    });
    await failure(client.me.get());
    expect(server.requests).toHaveLength(1);
  });

  it('a caller abort during the backoff sleep stops the retries', async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const { server, client } = await setup(
      (_req, res) => {
        sendJson(res, 503, { detail: 'busy' });
        // The client is now asleep for ~5 s before its retry: abort in the middle of that sleep.
        setTimeout(() => controller.abort(reason), 100);
      },
      { retry: { retries: 5, minDelay: 5_000, maxDelay: 5_000 }, random: () => 0.99 },
    );
    const started = performance.now();
    await expect(client.me.get({ signal: controller.signal })).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(server.requests).toHaveLength(1);
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

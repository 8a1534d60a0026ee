/**
 * A test server with a client pointed at it, both closed after each test, and the error a call fails
 * with: the set-up the client's over-HTTP suites share.
 */
import { afterEach, expect } from 'vitest';
import { type AdServiceClient, AdServiceError, type ClientOptions, createClient } from '../../src/index.ts';
import { type Handler, startServer, type TestServer } from './server.ts';

/**
 * Registers an `afterEach` that closes what the returned `setup` opened; `setup(handler, options)` starts
 * a server answering with `handler` and a client on it (`defaults` and `options` over `retry: false`).
 *
 * @example
 * ```ts
 * const setup = serverClients({ apiKey: 'pbsk_test' });
 * const { client } = await setup((_req, res) => sendJson(res, 503, { detail: 'busy' }));
 * ```
 */
export function serverClients(defaults: Partial<ClientOptions>) {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
  });
  return async (
    handler: Handler,
    options: Partial<ClientOptions> = {},
  ): Promise<{ server: TestServer; client: AdServiceClient }> => {
    const server = await startServer(handler);
    open.push(server);
    const client = createClient({
      retry: false,
      ...defaults,
      ...options,
      baseUrl: server.url,
    } as ClientOptions);
    open.push(client);
    return { server, client };
  };
}

/**
 * The `AdServiceError` a call rejects with (the test fails if it resolves or throws anything else).
 *
 * @example
 * ```ts
 * const err = await failureOf(client.conversions.confirm(body));
 * ```
 */
export async function failureOf(promise: Promise<unknown>): Promise<AdServiceError> {
  const err = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AdServiceError);
  return err as AdServiceError;
}

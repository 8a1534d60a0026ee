/**
 * The API key is a secret: it never appears in an error message, a stack, `util.inspect` (at any depth,
 * causes included) or the JSON of a client or an error — whatever way the call failed.
 */
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AdServiceClient, ClientOptionsError, createClient } from '../src/index.ts';
import { sendJson, startServer, type TestServer } from './helpers/server.ts';

const API_KEY = 'pbsk_TOPSECRET_4f9a2c';

function expectNoKey(value: unknown): void {
  const views = [
    inspect(value, { depth: Number.POSITIVE_INFINITY, showHidden: true, getters: true }),
    JSON.stringify(value) ?? '',
  ];
  if (value instanceof Error) views.push(value.message, value.stack ?? '', String(value));
  for (const view of views) expect(view).not.toContain('TOPSECRET');
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
}

describe('the API key never leaks', () => {
  let server: TestServer;
  let client: AdServiceClient;
  beforeEach(async () => {
    server = await startServer((req, res) => {
      if (req.path === '/v1/me') return sendJson(res, 401, { detail: 'invalid key' });
      if (req.path === '/v1/segments') return; // hang
      if (req.path === '/v1/credits') throw new Error('reset');
      sendJson(res, 200, ['not', 'an object']);
    });
    client = createClient({ baseUrl: server.url, apiKey: API_KEY, timeout: 1_000, retry: false });
  });
  afterEach(async () => {
    await client.close();
    await server.close();
  });

  it('the key does reach the server as the bearer token', async () => {
    await caught(client.me.get());
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('util.inspect and JSON.stringify of the client show its configuration but not the key', () => {
    expectNoKey(client);
    expect(inspect(client)).toContain(server.url);
    expect(JSON.parse(JSON.stringify(client))).toMatchObject({ baseUrl: `${server.url}/`, timeout: 1_000 });
    expect(Object.values(client).join(' ')).not.toContain('TOPSECRET');
  });

  it('errors from a 401, a timeout, a reset, a bad shape and a validation failure carry no key', async () => {
    const errors = [
      await caught(client.me.get()),
      await caught(client.segments.list()),
      await caught(client.credits.get()),
      await caught(client.boost.get()),
      await caught(client.conversions.confirm({ click_token: API_KEY, order_id: 'o', value_micros: 1.5 })),
    ];
    expect(errors.map((e) => (e as Error).name)).toEqual([
      'AuthenticationError',
      'TimeoutError',
      'ConnectionError',
      'InvalidResponseError',
      'RequestValidationError',
    ]);
    for (const err of errors) expectNoKey(err);
  });

  it('a refused connection error carries no key, causes included', async () => {
    await server.close();
    const err = await caught(client.placements.live('plc_1'));
    expect((err as Error).name).toBe('ConnectionError');
    expectNoKey(err);
    server = await startServer(() => {});
  });

  it('an invalid apiKey option is rejected without echoing the key', () => {
    let err: unknown;
    try {
      createClient({ baseUrl: server.url, apiKey: 'pbsk TOPSECRET with spaces' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ClientOptionsError);
    expect((err as ClientOptionsError).field).toBe('apiKey');
    expectNoKey(err);
  });
});

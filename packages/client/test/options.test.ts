/** Client options: one schema with exported defaults, unknown keys rejected by name, an injected fetch wins. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ClientOptionsError,
  createClient,
  DEFAULT_RETRIES,
  DEFAULT_RETRY_MAX_DELAY_MS,
  DEFAULT_RETRY_MIN_DELAY_MS,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_USER_AGENT,
  resolveClientOptions,
} from '../src/index.ts';
import { sendJson, startServer, type TestServer } from './helpers/server.ts';

const base = { baseUrl: 'http://127.0.0.1:9', apiKey: 'pbsk_options' };

function optionError(run: () => unknown): ClientOptionsError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ClientOptionsError);
    return err as ClientOptionsError;
  }
  throw new Error('expected a ClientOptionsError');
}

describe('client options', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('applies the exported defaults', () => {
    const resolved = resolveClientOptions(base);
    expect(resolved.timeout).toBe(DEFAULT_TIMEOUT_MS);
    expect(resolved.userAgent).toBe(DEFAULT_USER_AGENT);
    expect(resolved.retry).toEqual({
      retries: DEFAULT_RETRIES,
      minDelay: DEFAULT_RETRY_MIN_DELAY_MS,
      maxDelay: DEFAULT_RETRY_MAX_DELAY_MS,
    });
  });

  it('rejects an unknown key by name, at the top level and inside retry', () => {
    expect(optionError(() => createClient({ ...base, timeoutMs: 5 } as never)).field).toBe('timeoutMs');
    expect(
      optionError(() => createClient({ ...base, retry: { retries: 1, backoff: 2 } } as never)).field,
    ).toBe('retry.backoff');
  });

  it.each(['https://ads.example/v1', 'https://ads.example/v1/', 'https://ads.example/api/V1//'])(
    'refuses the base URL %s, whose path already ends in /v1, naming baseUrl',
    (baseUrl) => {
      const err = optionError(() => createClient({ ...base, baseUrl }));
      expect(err.field).toBe('baseUrl');
      expect(err.message).toMatch(/must not end in \/v1: the client adds \/v1 to every path/);
    },
  );

  it.each([
    'https://ads.example',
    'https://ads.example/api',
    'https://ads.example/v10',
    'https://ads.example/v1beta',
    'https://ads.example/v1/tenant',
  ])('takes the base URL %s, whose path does not end in /v1', (baseUrl) => {
    expect(createClient({ ...base, baseUrl }).baseUrl).toBe(new URL(baseUrl).href);
  });

  it('names the bad option when a value is invalid', () => {
    expect(optionError(() => createClient({ ...base, baseUrl: 'ftp://ads.example' })).field).toBe('baseUrl');
    expect(optionError(() => createClient({ ...base, apiKey: '' })).field).toBe('apiKey');
    expect(optionError(() => createClient({ ...base, timeout: 0 })).field).toBe('timeout');
    expect(optionError(() => createClient({ ...base, timeout: 1.5 })).field).toBe('timeout');
    expect(optionError(() => createClient({ ...base, retry: { retries: -1 } })).field).toBe('retry.retries');
    expect(optionError(() => createClient({ ...base, fetch: 'fetch' as never })).field).toBe('fetch');
    expect(optionError(() => createClient({ ...base, userAgent: 'bad\nagent' })).field).toBe('userAgent');
  });

  it('uses undici on Node by default and an injected fetch whenever one is given', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, { account_id: 'acct_1', scopes: [] }));
    const calls: string[] = [];
    const injected: typeof fetch = (input, init) => {
      calls.push(String(input));
      return globalThis.fetch(input, init);
    };
    const viaFetch = createClient({ baseUrl: server.url, apiKey: 'k', fetch: injected });
    const viaDefault = createClient({ baseUrl: server.url, apiKey: 'k' });
    try {
      expect(viaFetch.transport).toBe('fetch');
      expect(viaDefault.transport).toBe('undici');
      await viaFetch.me.get();
      await viaDefault.me.get();
      expect(calls).toEqual([`${server.url}/v1/me`]);
      expect(server.requests).toHaveLength(2);
    } finally {
      await viaFetch.close();
      await viaDefault.close();
    }
  });

  it('connections bounds the sockets the Node transport opens, however many calls are in flight', async () => {
    server = await startServer((_req, res) => {
      setTimeout(() => sendJson(res, 200, { account_id: 'acct_1', scopes: [] }), 20);
    });
    const client = createClient({ baseUrl: server.url, apiKey: 'k', connections: 3 });
    try {
      const results = await Promise.all(Array.from({ length: 30 }, () => client.me.get()));
      expect(results).toHaveLength(30);
      expect(server.requests).toHaveLength(30);
      expect(server.connections()).toBeLessThanOrEqual(3);
    } finally {
      await client.close();
    }
  });

  it('sends a custom user agent', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, { account_id: 'acct_1', scopes: [] }));
    const client = createClient({ baseUrl: server.url, apiKey: 'k', userAgent: 'shop-worker/2.1' });
    try {
      await client.me.get();
      expect(server.requests[0]?.headers['user-agent']).toBe('shop-worker/2.1');
    } finally {
      await client.close();
    }
  });

  it('a closed client opens a new connection for a later call', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, { account_id: 'acct_1', scopes: [] }));
    const client = createClient({ baseUrl: server.url, apiKey: 'k' });
    await client.me.get();
    await client.close();
    await client.me.get();
    await client[Symbol.asyncDispose]();
    expect(server.requests).toHaveLength(2);
  });
});

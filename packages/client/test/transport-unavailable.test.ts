/**
 * A transport that can never work is a configuration error (`TransportUnavailableError`, not retryable),
 * while ordinary refusals and resets stay retryable `ConnectionError`s. Over real loopback HTTP against
 * the sandbox, on Node: a `fetch` given an invalid dispatcher, a `fetch` that fails the way Deno's does
 * under scoped permissions (`NotCapable`), and a port nobody listens on.
 */
import { createServer } from 'node:net';
import { type SandboxWorld, startSandboxWorld } from '@postback/sandbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionError, createClient, TransportUnavailableError } from '../src/index.ts';
import { TransportUnavailable, transportUnavailable } from '../src/transport/unavailable.ts';
import { createUndiciTransport } from '../src/transport/undici.ts';

/** Deno 2's error for a permission the process was not granted (`Deno.errors.NotCapable`). */
class NotCapable extends Error {
  override name = 'NotCapable';
}

let world: SandboxWorld;
beforeAll(async () => {
  world = await startSandboxWorld();
});
afterAll(() => world.close());

async function confirmOnce(fetch: typeof globalThis.fetch | undefined, baseUrl = world.url) {
  const [click] = await world.clicks(1);
  const client = createClient({ baseUrl, apiKey: world.conversionsKey, ...(fetch ? { fetch } : {}) });
  try {
    return await client.conversions.confirm({
      click_token: click?.token ?? '',
      order_id: `ord_${Math.random().toString(36).slice(2)}`,
      value_micros: 1_000,
    });
  } finally {
    await client.close();
  }
}

describe('transport unavailable', () => {
  it('reports a fetch given an invalid dispatcher as unavailable, with the cause, maybe sent', async () => {
    const broken: typeof fetch = (input, init) =>
      fetch(input, { ...init, dispatcher: { dispatch: 'not a function' } } as RequestInit);
    const error = await confirmOnce(broken).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(TransportUnavailableError);
    expect(error).toMatchObject({ code: 'transport_unavailable', retryable: false, status: null });
    expect((error as Error).message).toMatch(
      /transport unavailable: TypeError: .*dispatch is not a function/,
    );
    // When it threw cannot be told from outside: never recorded as "never charged".
    expect((error as TransportUnavailableError).maybeSent).toBe(true);
  });

  it('reports a denied network permission (Deno NotCapable) as unavailable and never sent', async () => {
    const denied: typeof fetch = async (input) => {
      throw new NotCapable(
        `Requires net access to "${new URL(String(input)).host}", run again with --allow-net`,
      );
    };
    const error = await confirmOnce(denied).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(TransportUnavailableError);
    expect((error as Error).message).toContain('NotCapable: Requires net access to "127.0.0.1:');
    expect((error as TransportUnavailableError).maybeSent).toBe(false);
    expect((error as Error & { cause: Error }).cause.name).toBe('NotCapable');
    expect((await world.conversions()).conversions).toHaveLength(0);
  });

  it('keeps a refused connection a retryable ConnectionError on both transports', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    for (const fetch of [undefined, globalThis.fetch]) {
      const error = await confirmOnce(fetch, `http://127.0.0.1:${port}`).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(ConnectionError);
      expect(error).toMatchObject({ code: 'connection', retryable: true });
    }
  });

  it('turns an argument undici refuses before dispatching into TransportUnavailable, never sent', async () => {
    const transport = createUndiciTransport({ connections: 1 });
    try {
      const error = await transport
        .send({
          method: 'GET',
          url: new URL(`${world.url}/v1/me`),
          headers: { 'x-bad': 'line\nbreak' },
          body: undefined,
          signal: new AbortController().signal,
          maxBodyBytes: 1_048_576,
        })
        .catch((err: unknown) => err);
      expect(error).toBeInstanceOf(TransportUnavailable);
      expect(transportUnavailable(error)).toMatchObject({ maybeSent: false });
      expect((error as Error & { cause: { code: string } }).cause.code).toBe('UND_ERR_INVALID_ARG');
    } finally {
      await transport.close();
    }
  });

  it('finds the cause anywhere in the chain, and nothing in an ordinary network error', () => {
    const wrapped = new TypeError('fetch failed', { cause: new NotCapable('Requires net access') });
    expect(transportUnavailable(wrapped)).toMatchObject({
      maybeSent: false,
      why: 'NotCapable: Requires net access',
    });
    const node = Object.assign(new Error('access denied'), { code: 'ERR_ACCESS_DENIED' });
    expect(transportUnavailable(node)?.why).toBe('Error (ERR_ACCESS_DENIED): access denied');
    const own = new TransportUnavailable('undici', 'undici Pool has no close()', false);
    expect(transportUnavailable(own)).toMatchObject({ maybeSent: false, why: 'undici Pool has no close()' });
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });
    expect(transportUnavailable(refused)).toBeNull();
    expect(transportUnavailable(new TypeError('Network connection lost.'))).toBeNull();
  });
});

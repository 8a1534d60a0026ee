/**
 * Answers of any size: the client reads at most `maxAnswerBytes` of a body, then cancels it (the
 * connection closes and the server stops sending), and treats the answer as an unexpected body — a 2xx
 * stays a 2xx (`InvalidResponseError` with its status: applied), an error keeps its status and
 * `Retry-After` but not the body's `detail`. JSON nested past `maxAnswerDepth` is treated the same way.
 * Over real HTTP, through both transports (undici, the Node default, and an injected `fetch`).
 */
import { describe, expect, it } from 'vitest';
import {
  type ClientOptions,
  ClientOptionsError,
  ConflictError,
  createClient,
  DEFAULT_MAX_ANSWER_BYTES,
  InvalidResponseError,
  NotFoundError,
  ServerError,
} from '../src/index.ts';
import { type FloodAnswer, peakMemoryGrowth, startFloodServer } from './helpers/flood-server.ts';
import { sendJson } from './helpers/server.ts';
import { failureOf, serverClients } from './helpers/server-client.ts';

const API_KEY = 'pbsk_bounded_answers';
const BODY = { click_token: 'tok_abcdefghijklmnop', order_id: 'ord_1', value_micros: 1 };
const MIB = 1024 * 1024;
/** The runaway answer: 256 MiB of padding inside a JSON string (the loop's bound). */
const FLOOD = 256 * MIB;

const TRANSPORTS: Array<[string, Partial<ClientOptions>]> = [
  ['undici', {}],
  ['fetch', { fetch: (input, init) => globalThis.fetch(input, init) }],
];

/** Starts a flood server and a client on it; both closed by the caller's `using`-like `close`. */
async function flooded(answer: FloodAnswer, options: Partial<ClientOptions>) {
  const server = await startFloodServer(answer);
  const client = createClient({ baseUrl: server.url, apiKey: API_KEY, retry: false, ...options });
  return {
    server,
    client,
    async close() {
      await client.close();
      await server.close();
    },
  };
}

describe.each(TRANSPORTS)('an answer of any size, over %s', (_name, transport) => {
  it('a 2xx of 256 MiB returns quickly as an unreadable 2xx, reading about 1 MiB and closing the connection', async () => {
    const world = await flooded(
      {
        status: 200,
        headers: { 'content-type': 'application/json' },
        head: '{"status":"accepted","pad":"',
        padBytes: FLOOD,
      },
      transport,
    );
    try {
      const started = performance.now();
      const { growth, result } = await peakMemoryGrowth(() => world.client.conversions.confirm(BODY));
      const took = performance.now() - started;
      expect(result.status).toBe('rejected');
      const err = await failureOf(Promise.reject((result as PromiseRejectedResult).reason));
      expect(err).toBeInstanceOf(InvalidResponseError);
      // A 2xx is delivered whatever its body: the status stays on the error for the classification.
      expect(err).toMatchObject({ status: 200, code: 'invalid_response', detailFromService: false });
      expect(err.detail).toMatch(/larger than maxAnswerBytes/);
      expect(took).toBeLessThan(5_000);
      expect(growth).toBeLessThan(64 * MIB);
      await expect(world.server.ended()).resolves.toEqual({ cutShort: true });
      expect(world.server.written()).toBeLessThan(FLOOD / 4);
    } finally {
      await world.close();
    }
  }, 60_000);

  it('a 503 of 256 MiB keeps its status and Retry-After, without the body, and the next call gets a new connection', async () => {
    const world = await flooded(
      { status: 503, headers: { 'retry-after': '7' }, head: '{"detail":"', padBytes: FLOOD },
      transport,
    );
    try {
      const { growth, result } = await peakMemoryGrowth(() => world.client.me.get());
      const err = await failureOf(Promise.reject((result as PromiseRejectedResult).reason));
      expect(err).toBeInstanceOf(ServerError);
      expect(err).toMatchObject({
        status: 503,
        retryable: true,
        retryAfterMs: 7_000,
        detail: 'HTTP 503',
        detailFromService: false,
      });
      expect(growth).toBeLessThan(64 * MIB);
      await expect(world.server.ended()).resolves.toEqual({ cutShort: true });
      // The half-read connection was not reused: a second call is answered (and cut) the same way.
      await expect(world.client.me.get()).rejects.toBeInstanceOf(ServerError);
      expect(world.server.written()).toBeLessThan(FLOOD / 2);
    } finally {
      await world.close();
    }
  }, 60_000);

  it('a 404 declared by Content-Length to be past the bound is not read at all', async () => {
    const world = await flooded(
      {
        status: 404,
        headers: { 'content-length': String(FLOOD + 12) },
        head: '{"detail":"',
        padBytes: FLOOD,
      },
      transport,
    );
    try {
      const err = await failureOf(world.client.me.get());
      expect(err).toBeInstanceOf(NotFoundError);
      expect(err).toMatchObject({ status: 404, detail: 'HTTP 404', detailFromService: false });
      await expect(world.server.ended()).resolves.toEqual({ cutShort: true });
      expect(world.server.written()).toBeLessThan(FLOOD / 4);
    } finally {
      await world.close();
    }
  }, 60_000);
});

describe('the bounds as options', () => {
  const setup = serverClients({ apiKey: API_KEY });
  const exactly = (bytes: number) => {
    const head = '{"order_id":"ord_1","pad":"';
    return `${head}${'a'.repeat(bytes - head.length - 2)}"}`;
  };

  it('reads an answer of exactly maxAnswerBytes and refuses one byte more', async () => {
    const { client } = await setup(
      (req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(exactly(req.path.includes('refund') ? 1_001 : 1_000));
      },
      { maxAnswerBytes: 1_000 },
    );
    await expect(client.conversions.confirm(BODY)).resolves.toMatchObject({ order_id: 'ord_1' });
    const err = await failureOf(client.conversions.refund({ campaign_id: 'cmp_1', order_id: 'ord_1' }));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err).toMatchObject({ status: 200, retryable: true });
  });

  it('refuses a 2xx nested deeper than maxAnswerDepth as an unreadable 2xx', async () => {
    const deep = `{"order_id":"ord_1","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const { client } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(deep);
    });
    const err = await failureOf(client.conversions.confirm(BODY));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err).toMatchObject({ status: 200, code: 'invalid_response' });
    expect(err.detail).toMatch(/deeper than maxAnswerDepth/);
  });

  it('reads no detail from an error body nested deeper than maxAnswerDepth, keeping its status', async () => {
    const { client } = await setup(
      (_req, res) => {
        res.writeHead(422, { 'content-type': 'application/json' });
        res.end(`{"detail":"window closed","x":${'['.repeat(5)}${']'.repeat(5)}}`);
      },
      { maxAnswerDepth: 3 },
    );
    const err = await failureOf(client.conversions.confirm(BODY));
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ status: 422, detail: 'HTTP 422', detailFromService: false });
  });

  it('reads a real answer within the default bounds as before', async () => {
    const { client } = await setup((_req, res) =>
      sendJson(res, 200, { order_id: 'ord_1', campaign_id: 'cmp_9' }),
    );
    await expect(client.conversions.confirm(BODY)).resolves.toMatchObject({ campaign_id: 'cmp_9' });
    expect(DEFAULT_MAX_ANSWER_BYTES).toBe(MIB);
  });

  it.each([
    ['maxAnswerBytes', 0],
    ['maxAnswerBytes', 1.5],
    ['maxAnswerDepth', 0],
    ['maxAnswerDepth', 1_001],
  ])('refuses %s = %s naming the option, and takes a sound value of it', (field, value) => {
    const make = (v: number) => () =>
      createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: API_KEY, [field]: v });
    expect(make(value)).toThrow(ClientOptionsError);
    expect(make(value)).toThrow(expect.objectContaining({ field }));
    expect(make(16)).not.toThrow();
  });
});

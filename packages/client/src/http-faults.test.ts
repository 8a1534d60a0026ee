/**
 * Faults injected at the HTTP level with nock (through the fetch transport, which nock intercepts):
 * malformed bodies, connection resets, 429 with Retry-After, 5xx and slow answers.
 */
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { confirmation } from '../test/helpers/fixtures.ts';
import {
  ConnectionError,
  createClient,
  InvalidResponseError,
  RateLimitError,
  ServerError,
  TimeoutError,
} from './index.ts';

const BASE = 'https://ads.nock.test';
const CONFIRM = { click_token: 'tok_abcdefghijklmnopqrstuvwx', order_id: 'ord_1', value_micros: 12_340_000 };
const ME = { account_id: 'acct_1', scopes: ['read'] };

const client = createClient({
  baseUrl: BASE,
  apiKey: 'pbsk_nock',
  // Looked up per call so nock's patched global fetch is the one used.
  fetch: (input, init) => globalThis.fetch(input, init),
  retry: { retries: 2, minDelay: 1, maxDelay: 2_000 },
  timeout: 5_000,
});

beforeAll(() => {
  nock.disableNetConnect();
});
afterEach(() => {
  nock.abortPendingRequests();
  nock.cleanAll();
});
afterAll(async () => {
  nock.enableNetConnect();
  nock.restore();
  await client.close();
});

describe('faults injected with nock', () => {
  it('sends the bearer key and the JSON body the wire expects', async () => {
    const scope = nock(BASE, {
      reqheaders: { authorization: 'Bearer pbsk_nock', 'content-type': 'application/json' },
    })
      .post('/v1/conversions/s2s', CONFIRM)
      .reply(200, confirmation);
    expect(await client.conversions.confirm(CONFIRM)).toEqual(confirmation);
    expect(scope.isDone()).toBe(true);
  });

  it('a malformed 2xx body is an InvalidResponseError', async () => {
    nock(BASE).post('/v1/conversions/s2s').reply(200, '{"order_id":', { 'content-type': 'application/json' });
    await expect(client.conversions.confirm(CONFIRM)).rejects.toBeInstanceOf(InvalidResponseError);
  });

  it('a connection reset is a retryable ConnectionError and the POST is sent once', async () => {
    const scope = nock(BASE).post('/v1/conversions/s2s').replyWithError('socket hang up');
    const err = await client.conversions.confirm(CONFIRM).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as ConnectionError).retryable).toBe(true);
    expect(scope.isDone()).toBe(true);
  });

  it('a GET retries through a reset and a 502 to the answer', async () => {
    const scope = nock(BASE)
      .get('/v1/me')
      .replyWithError({ code: 'ECONNRESET' })
      .get('/v1/me')
      .reply(502, { detail: 'bad gateway' })
      .get('/v1/me')
      .reply(200, ME);
    expect(await client.me.get()).toEqual(ME);
    expect(scope.isDone()).toBe(true);
  });

  it('a 429 with Retry-After on a POST surfaces as RateLimitError with the wait in ms', async () => {
    nock(BASE).post('/v1/conversions/s2s/refund').reply(429, { detail: 'too many' }, { 'Retry-After': '30' });
    const err = await client.conversions
      .refund({ campaign_id: 'cmp_1', order_id: 'ord_1' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfterMs).toBe(30_000);
  });

  it('a 429 with an HTTP-date Retry-After in the near future is waited out on a GET', async () => {
    const at = new Date(Date.now() + 1_000).toUTCString();
    const scope = nock(BASE)
      .get('/v1/boost')
      .reply(429, { detail: 'wait' }, { 'Retry-After': at })
      .get('/v1/boost')
      .reply(200, {
        available: true,
        claimed_campaign_id: null,
        expires_at: null,
      });
    expect((await client.boost.get()).available).toBe(true);
    expect(scope.isDone()).toBe(true);
  });

  it('a 5xx on a POST is a retryable ServerError carrying the detail', async () => {
    nock(BASE).post('/v1/campaigns/plan').reply(500, { detail: 'planner down' });
    const err = await client.campaigns.plan({ total_budget_micros: 1_000_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toMatchObject({ detail: 'planner down', retryable: true });
  });

  it('an answer that does not come within the timeout is a TimeoutError', async () => {
    // A reply that never comes, rather than .delay(): nock answering a request after it was aborted trips
    // an undici assertion. The pending promise holds no timer, so nothing is left running.
    nock(BASE)
      .post('/v1/conversions/s2s')
      .reply(() => new Promise<never>(() => {}));
    await expect(client.conversions.confirm(CONFIRM, { timeout: 200 })).rejects.toBeInstanceOf(TimeoutError);
  });
});

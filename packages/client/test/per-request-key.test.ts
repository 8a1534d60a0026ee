import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  ClientOptionsError,
  ConflictError,
  createClient,
  RequestValidationError,
} from '../src/index.ts';
import { confirmation, reversal } from './helpers/fixtures.ts';
import { expectNowhere, renderings } from './helpers/secret-views.ts';
import { type Handler, sendJson, startServer } from './helpers/server.ts';
import { failureOf, serverClients } from './helpers/server-client.ts';

const CLIENT_KEY = 'pbsk_CLIENTKEY_default';
const ACCOUNT_KEY = 'pbsk_ACCOUNTKEY_7c1e/x+y';
const CONFIRM = { click_token: 'tok_abcdefghijklmnopqrstuvwx', order_id: 'ord_1', value_micros: 1_000_000 };
const REFUND = { campaign_id: 'cmp_abc123', order_id: 'ord_1' };

/** The error a call rejects with, whatever its class. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
}

/** Echoes the key it received back in the body and in headers, in the shape the path asks for. */
const echo: Handler = (req, res) => {
  const auth = String(req.headers.authorization ?? '');
  const key = auth.replace(/^Bearer /, '');
  const echoHeaders = {
    'www-authenticate': `Bearer error="invalid_token", key="${key}"`,
    'retry-after': key,
  };
  switch (req.path) {
    case '/v1/conversions/s2s':
      return sendJson(
        res,
        422,
        { detail: `key ${key} is not allowed (${auth}); url ${encodeURIComponent(key)}` },
        echoHeaders,
      );
    case '/v1/conversions/s2s/refund':
      return sendJson(res, 401, { detail: JSON.stringify({ refused: key }) }, echoHeaders);
    case '/v1/segments': {
      // JSON.parse's message quotes the start of the body: the cause must be scrubbed too.
      const body = `${key} ${JSON.stringify(key)}`;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    default:
      return sendJson(res, 503, { detail: `upstream refused ${key}` }, echoHeaders);
  }
};

describe('a per-request apiKey', () => {
  const setup = serverClients({ apiKey: CLIENT_KEY, timeout: 2_000 });

  it('is sent instead of the client key, for that call only', async () => {
    const { server, client } = await setup((req, res) =>
      sendJson(res, 200, req.path.endsWith('/refund') ? reversal : confirmation),
    );
    await client.conversions.confirm(CONFIRM, { apiKey: ACCOUNT_KEY });
    await client.conversions.refund(REFUND, {
      apiKey: 'pbsk_other_account',
      signal: new AbortController().signal,
    });
    await client.conversions.confirm(CONFIRM);
    await client.conversions.confirm(CONFIRM, { apiKey: undefined });
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      `Bearer ${ACCOUNT_KEY}`,
      'Bearer pbsk_other_account',
      `Bearer ${CLIENT_KEY}`,
      `Bearer ${CLIENT_KEY}`,
    ]);
    expectNowhere(ACCOUNT_KEY, client);
  });

  it('echoed back in detail, body or headers, is absent from message, detail, cause, stack, inspect and JSON', async () => {
    const { server, client } = await setup(echo);
    const errors = [
      await failureOf(client.conversions.confirm(CONFIRM, { apiKey: ACCOUNT_KEY })),
      await failureOf(client.conversions.refund(REFUND, { apiKey: ACCOUNT_KEY })),
      await failureOf(client.segments.list({ apiKey: ACCOUNT_KEY })),
      await failureOf(client.credits.get({ apiKey: ACCOUNT_KEY })),
    ];
    expect(server.requests.every((r) => r.headers.authorization === `Bearer ${ACCOUNT_KEY}`)).toBe(true);
    expect(errors.map((e) => e.name)).toEqual([
      'ConflictError',
      'AuthenticationError',
      'InvalidResponseError',
      'ServerError',
    ]);
    expect(errors[0]).toBeInstanceOf(ConflictError);
    expect(errors[0]?.detail).toBe('key [redacted] is not allowed (Bearer [redacted]); url [redacted]');
    expect(errors[1]).toBeInstanceOf(AuthenticationError);
    expect(errors[2]?.cause).toBeInstanceOf(Error);
    for (const err of errors) {
      expectNowhere(ACCOUNT_KEY, err);
      expectNowhere(CLIENT_KEY, err);
    }
  });

  it('that holds the client key (or is held by it) is removed whole, as is the client key', async () => {
    const longer = `${CLIENT_KEY}_extended`;
    const { client } = await setup((req, res) =>
      sendJson(res, 422, {
        detail: `got ${String(req.headers.authorization)} and ${CLIENT_KEY} and ${longer}`,
      }),
    );
    const err = await failureOf(client.conversions.confirm(CONFIRM, { apiKey: longer }));
    expect(err.detail).toBe('got Bearer [redacted] and [redacted] and [redacted]');
  });

  it('is scrubbed from timeout and connection errors, causes included', async () => {
    const { client } = await setup(() => {}, { timeout: 150 });
    const timedOut = await failureOf(client.me.get({ apiKey: ACCOUNT_KEY }));
    expect(timedOut.name).toBe('TimeoutError');
    expectNowhere(ACCOUNT_KEY, timedOut);

    const closed = await startServer(() => {});
    await closed.close();
    const onClosedPort = createClient({ baseUrl: closed.url, retry: false, timeout: 2_000 });
    try {
      const err = await failureOf(onClosedPort.placements.live('plc_1', { apiKey: ACCOUNT_KEY }));
      expect(err.name).toBe('ConnectionError');
      expectNowhere(ACCOUNT_KEY, err);
    } finally {
      await onClosedPort.close();
    }
  });

  it('that is empty, not a string, or holds whitespace or control characters is a RequestValidationError naming apiKey; nothing is sent', async () => {
    const { server, client } = await setup((_req, res) => sendJson(res, 200, confirmation));
    const bad = [
      '',
      'pbsk_ACCOUNT KEY',
      'pbsk_ACCOUNTKEY\n',
      '\tpbsk_ACCOUNTKEY',
      'pbsk_ACCOUNT\u0000KEY',
      'pbsk_ACCOUNTKEY_é',
      42,
      null,
    ];
    for (const apiKey of bad) {
      const err = await rejection(client.conversions.confirm(CONFIRM, { apiKey: apiKey as string }));
      expect(err).toBeInstanceOf(RequestValidationError);
      expect((err as RequestValidationError).field).toBe('apiKey');
      expect((err as RequestValidationError).code).toBe('validation');
      for (const view of renderings(err)) expect(view).not.toContain('ACCOUNT');
    }
    // GETs too (they take no body to validate first).
    const err = await rejection(client.me.get({ apiKey: 'pbsk_ACCOUNT KEY' }));
    expect((err as RequestValidationError).field).toBe('apiKey');
    expect(server.requests).toHaveLength(0);
  });
});

describe('a client without an apiKey of its own', () => {
  const setup = serverClients({ timeout: 2_000 });

  it('sends each call with the key it brings', async () => {
    const { server, client } = await setup((_req, res) => sendJson(res, 200, confirmation));
    await client.conversions.confirm(CONFIRM, { apiKey: 'pbsk_account_a' });
    await client.conversions.confirm(CONFIRM, { apiKey: 'pbsk_account_b' });
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer pbsk_account_a',
      'Bearer pbsk_account_b',
    ]);
    expect(client.toJSON()).not.toHaveProperty('apiKey');
  });

  it('rejects a call without a key with a ClientOptionsError naming apiKey, before any network I/O', async () => {
    const { server, client } = await setup((_req, res) => sendJson(res, 200, confirmation));
    for (const call of [
      () => client.conversions.confirm(CONFIRM),
      () => client.conversions.refund(REFUND, { apiKey: undefined }),
      () => client.me.get(),
      () => client.sites.verify('site_1', { timeout: 1_000 }),
    ]) {
      const err = await rejection(call());
      expect(err).toBeInstanceOf(ClientOptionsError);
      expect((err as ClientOptionsError).field).toBe('apiKey');
      expect((err as ClientOptionsError).code).toBe('validation');
      expect((err as ClientOptionsError).retryable).toBe(false);
      expect((err as Error).message).toMatch(/apiKey/);
    }
    expect(server.requests).toHaveLength(0);
    expect(server.connections()).toBe(0);
  });
});

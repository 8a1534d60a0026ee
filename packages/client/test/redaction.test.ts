import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConflictError, createClient, createRedactor, redactKey } from '../src/index.ts';
import { expectNowhere, forms } from './helpers/secret-views.ts';
import { type Handler, sendJson } from './helpers/server.ts';
import { failureOf, serverClients } from './helpers/server-client.ts';

const CONFIRM = { click_token: 'tok_abcdefghijklmnopqrstuvwx', order_id: 'ord_1', value_micros: 1_000_000 };

/** Printable ASCII without spaces: every key `createClient` accepts. */
const keyArb = fc.string({
  unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  minLength: 8,
  maxLength: 40,
});

describe('redactKey', () => {
  it('removes the key in every form from arbitrary surrounding text', () => {
    fc.assert(
      fc.property(
        keyArb,
        fc.string(),
        fc.string(),
        fc.integer({ min: 0, max: 2 }),
        (key, before, after, form) => {
          const written = forms(key)[form] as string;
          const out = redactKey(`${before}${written}${after}`, key);
          expect(out).toContain('[redacted]');
          // A marker beside arbitrary text may spell a key that starts like `d]…`: the marker is ours.
          const outside = out.replaceAll('[redacted]', '\u0000');
          for (const f of forms(key)) expect(outside).not.toContain(f);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('removes lower-case and partial percent-encoding, \\u00XX escapes and any Bearer token', () => {
    const key = 'pbsk_a/b+c"d';
    expect(redactKey('k=pbsk_a%2fb%2Bc%22d;', key)).toBe('k=[redacted];');
    expect(redactKey('k=pbsk_a/b%2bc"d', key)).toBe('k=[redacted]');
    expect(redactKey('{"k":"pbsk_a\\/b+c\\"d"}', key)).toBe('{"k":"[redacted]"}');
    expect(redactKey('\\u0070bsk_a/b+c\\u0022d', key)).toBe('[redacted]');
    expect(redactKey('Authorization: Bearer someoneElse.token-1 was refused', key)).toBe(
      'Authorization: Bearer [redacted] was refused',
    );
  });

  it('leaves text without the key as it is (outside Bearer tokens)', () => {
    fc.assert(
      fc.property(keyArb, fc.string(), (key, text) => {
        fc.pre(!text.toLowerCase().includes('bearer') && !text.includes('%') && !text.includes('\\'));
        fc.pre(!text.toLowerCase().includes(key.toLowerCase()));
        expect(redactKey(text, key)).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('a redactor built once removes several keys, the longest first', () => {
    const redact = createRedactor(['abc', 'abcdef']);
    expect(redact('abcdef and abc')).toBe('[redacted] and [redacted]');
    expect(createRedactor('')('an empty key removes nothing')).toBe('an empty key removes nothing');
  });
});

describe('the client scrubs its key from every error, over real HTTP', () => {
  const start = serverClients({ timeout: 2_000 });
  const setup = (key: string, handler: Handler) => start(handler, { apiKey: key });
  const failure = failureOf;

  /** Echoes what it received, in the shape the test asks for through the path. */
  const echo: Handler = (req, res) => {
    const auth = String(req.headers.authorization ?? '');
    const key = auth.replace(/^Bearer /, '');
    switch (req.path) {
      case '/v1/conversions/s2s':
        return sendJson(res, 422, {
          detail: `key ${key} is not allowed (${auth}); url ${encodeURIComponent(key)}`,
        });
      case '/v1/me': {
        const body = `<html>proxy refused Authorization: ${auth} / ${encodeURIComponent(key)}</html>`;
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(body) });
        res.end(body);
        return;
      }
      case '/v1/segments': {
        // JSON.parse's message quotes the start of the body: the cause must be scrubbed too.
        const body = `${key} ${JSON.stringify(key)}`;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
        return;
      }
      default:
        return sendJson(res, 503, { detail: JSON.stringify({ upstream: `refused ${key}` }) });
    }
  };

  it('a 422 whose detail echoes the key: message, detail, stack, inspect and JSON never hold it', async () => {
    const key = 'pbsk_TOPSECRET_4f9a2c/x+y';
    const { server, client } = await setup(key, echo);
    const err = await failure(client.conversions.confirm(CONFIRM));
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${key}`);
    expect(err).toBeInstanceOf(ConflictError);
    expect(err.detail).toBe('key [redacted] is not allowed (Bearer [redacted]); url [redacted]');
    expectNowhere(key, err);
    expectNowhere(key, client);
  });

  it('a non-JSON 2xx echoing the key, a JSON parse failure quoting it, and a 503 with it JSON-escaped', async () => {
    // Short, so that JSON.parse's message (which quotes only the start of the body) holds it whole.
    const key = 'k"y\\1/%Z';
    const { client } = await setup(key, echo);
    const errors = [
      await failure(client.me.get()),
      await failure(client.segments.list()),
      await failure(client.credits.get()),
    ];
    expect(errors.map((e) => e.name)).toEqual([
      'InvalidResponseError',
      'InvalidResponseError',
      'ServerError',
    ]);
    expect(errors[1]?.cause).toBeInstanceOf(Error);
    for (const err of errors) expectNowhere(key, err);
  });

  it('whatever the key, the errors of a service echoing it hold it nowhere', async () => {
    let current = '';
    const { server } = await setup('pbsk_placeholder', echo);
    await fc.assert(
      fc.asyncProperty(keyArb, async (key) => {
        current = key;
        const keyed = createClient({
          baseUrl: server.url,
          apiKey: key,
          retry: false,
          fetch: globalThis.fetch,
        });
        try {
          for (const call of [
            () => keyed.conversions.confirm(CONFIRM),
            () => keyed.me.get(),
            () => keyed.segments.list(),
            () => keyed.credits.get(),
          ]) {
            expectNowhere(current, await failure(call()));
          }
          expectNowhere(current, keyed);
        } finally {
          await keyed.close();
        }
      }),
      { numRuns: 40 },
    );
  });

  it('client.redact removes the client key for texts the caller stores', async () => {
    const key = 'pbsk_caller_text';
    const { client } = await setup(key, echo);
    expect(client.redact(`job failed: ${key} / ${encodeURIComponent(key)}`)).toBe(
      'job failed: [redacted] / [redacted]',
    );
  });
});

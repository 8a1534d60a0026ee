/**
 * One source of truth for "may sending again help, and when": every `AdServiceError` carries `retryable`
 * and `retryAfterMs` (the service's `Retry-After`, for any status), and `detailFromService` says whether
 * the error body was the service's own JSON error. Parsed by a strict `Retry-After` parser.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  errorFromResponse,
  MAX_RETRY_AFTER_MS,
  NotFoundError,
  parseRetryAfter,
  ServerError,
} from '../src/index.ts';
import { sendJson } from './helpers/server.ts';
import { failureOf, serverClients } from './helpers/server-client.ts';

const CONFIRM = { click_token: 'tok_abcdefghijklmnopqrstuvwx', order_id: 'ord_1', value_micros: 1_000_000 };
const NOW = Date.parse('2026-11-22T05:00:00.000Z');
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');
const clock = (d: Date) => `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
/** Whole seconds within about 40 years of NOW, the range RFC 850's two-digit years can name. */
const instant = fc
  .integer({ min: -40 * 365 * 86_400, max: 40 * 365 * 86_400 })
  .map((s) => new Date(Math.floor(NOW / 1000) * 1000 + s * 1000));

describe('parseRetryAfter', () => {
  it('reads delta-seconds as milliseconds, clamped to MAX_RETRY_AFTER_MS', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.constantFrom('', ' ', '\t'), (n, pad) => {
        const expected = Math.min(Number(n) * 1000, MAX_RETRY_AFTER_MS);
        expect(parseRetryAfter(`${pad}${n}${pad}`, NOW)).toBe(expected);
      }),
    );
  });

  it('reads the three HTTP-date forms as the wait until that instant (0 when past)', () => {
    fc.assert(
      fc.property(instant, (d) => {
        const expected = Math.min(Math.max(0, d.getTime() - NOW), MAX_RETRY_AFTER_MS);
        const day = d.getUTCDate();
        const month = MONTHS[d.getUTCMonth()];
        const imf = d.toUTCString();
        const rfc850 = `${LONG_DAYS[d.getUTCDay()]}, ${two(day)}-${month}-${two(d.getUTCFullYear() % 100)} ${clock(d)} GMT`;
        const asctime = `${DAYS[d.getUTCDay()]} ${month} ${String(day).padStart(2, ' ')} ${clock(d)} ${d.getUTCFullYear()}`;
        expect(parseRetryAfter(imf, NOW)).toBe(expected);
        expect(parseRetryAfter(rfc850, NOW)).toBe(expected);
        expect(parseRetryAfter(asctime, NOW)).toBe(expected);
      }),
    );
  });

  it('gives null, never a guess, for anything that is neither', () => {
    for (const bad of [
      undefined,
      null,
      '',
      '1.5',
      '-1',
      '+5',
      '1e3',
      'soon',
      '2026-11-22T05:00:00Z',
      'Mon, 31 Feb 2026 00:00:00 GMT',
      'Mon, 01 Jan 2026 25:00:00 GMT',
    ]) {
      expect(parseRetryAfter(bad, NOW)).toBeNull();
    }
    fc.assert(
      fc.property(fc.string(), (text) => {
        const parsed = parseRetryAfter(text, NOW);
        // Whatever the text, the answer is null or a safe non-negative wait.
        if (parsed !== null) {
          expect(Number.isSafeInteger(parsed) && parsed >= 0 && parsed <= MAX_RETRY_AFTER_MS).toBe(true);
        }
        if (!/\d/.test(text)) expect(parsed).toBeNull();
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('retryAfterMs, retryable and detailFromService on every error, over real HTTP', () => {
  const setup = serverClients({ apiKey: 'pbsk_retry_after' });
  const failure = failureOf;

  it('a 503 with Retry-After: 600 is a retryable ServerError that keeps the 600 s', async () => {
    const { client } = await setup((_req, res) =>
      sendJson(res, 503, { detail: 'maintenance' }, { 'retry-after': '600' }),
    );
    const err = await failure(client.conversions.confirm(CONFIRM));
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toMatchObject({ status: 503, retryable: true, retryAfterMs: 600_000 });
  });

  it('a Retry-After HTTP date becomes the wait until then', async () => {
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 120_000);
    const { client } = await setup((_req, res) =>
      sendJson(res, 502, { detail: 'bad gateway' }, { 'retry-after': at.toUTCString() }),
    );
    const err = await failure(client.conversions.confirm(CONFIRM));
    expect(err.retryAfterMs).toBeGreaterThan(110_000);
    expect(err.retryAfterMs).toBeLessThanOrEqual(121_000);
  });

  it.each([
    [400, false],
    [403, false],
    [404, false],
    [408, true],
    [409, false],
    [422, false],
    [429, true],
    [500, true],
    [503, true],
    [504, true],
  ])('a %i keeps its Retry-After and says retryable: %s', async (status, retryable) => {
    const { client } = await setup((_req, res) =>
      sendJson(res, status, { detail: 'no' }, { 'retry-after': '30' }),
    );
    const err = await failure(client.conversions.confirm(CONFIRM));
    expect(err).toMatchObject({ status, retryable, retryAfterMs: 30_000 });
  });

  it('an error without Retry-After, a timeout and a refused connection have retryAfterMs null', async () => {
    const { client, server } = await setup((req, res) => {
      if (req.path === '/v1/segments') return; // hang
      sendJson(res, 500, { detail: 'down' });
    });
    expect((await failure(client.me.get())).retryAfterMs).toBeNull();
    expect((await failure(client.segments.list({ timeout: 100 }))).retryAfterMs).toBeNull();
    await server.close();
    expect((await failure(client.me.get())).retryAfterMs).toBeNull();
  });

  it('a 2xx that is not JSON keeps its Retry-After too', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(200, { 'retry-after': '5', 'content-length': '2' });
      res.end('ok');
    });
    expect(await failure(client.conversions.confirm(CONFIRM))).toMatchObject({
      status: 200,
      retryable: true,
      retryAfterMs: 5_000,
    });
  });

  it('detailFromService is true only for a JSON error body with a string detail', async () => {
    const bodies: Array<[string, string, boolean]> = [
      ['application/json', '{"detail":"campaign not found"}', true],
      ['application/json', '{"detail":""}', true],
      ['text/html', '<html><body>404 Not Found</body></html>', false],
      ['text/plain', '', false],
      ['application/json', '{"error":"not found"}', false],
      ['application/json', '{"detail":{"msg":"x"}}', false],
      ['application/json', '"not found"', false],
      ['application/json', '{"detail":', false],
    ];
    const { client } = await setup((_req, res, i) => {
      const [type, body] = bodies[i] ?? ['text/plain', ''];
      res.writeHead(404, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    for (const [, body, fromService] of bodies) {
      const err = await failure(client.conversions.confirm(CONFIRM));
      expect(err, body).toBeInstanceOf(NotFoundError);
      expect(err.detailFromService, body).toBe(fromService);
    }
  });

  it('errors that are not answers of the service never claim a detail from it', async () => {
    const { client } = await setup(() => {});
    expect((await failure(client.me.get({ timeout: 100 }))).detailFromService).toBe(false);
    expect(errorFromResponse(503, null).detailFromService).toBe(false);
    expect(errorFromResponse(503, { detail: 'busy' }, '7')).toMatchObject({
      detailFromService: true,
      retryAfterMs: 7_000,
    });
  });
});

/** The signed click cookie: round-trips, and refuses anything it did not sign. */
import { createHmac, createSecretKey } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_CLOCK_SKEW_MS } from '../click.ts';
import { DAY_MS } from '../policy.ts';
import { decodeBase64Url, encodeBase64Url } from './base64url.ts';
import { createClickCookieCodec } from './cookie-codec.ts';
import { nodeCryptoHmac, webCryptoHmac } from './hmac.ts';

const SECRET = 'test-secret-0123456789-abcdefghijklmnop';
const OLD_SECRET = 'old-secret-0123456789-abcdefghijklmnopq';
const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const WINDOW = 7 * DAY_MS;
const base = { confirmWindowMs: WINDOW, tokenMinLength: 16, tokenMaxLength: 256 };
const codec = createClickCookieCodec({ ...base, secrets: [SECRET] });
/** The Node adapters' synchronous HMAC. */
const nodeHmac = nodeCryptoHmac({ createHmac, createSecretKey });
const encoder = new TextEncoder();
const tokenArb = fc.stringMatching(/^[A-Za-z0-9._~-]{16,256}$/);
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~';

/** Every string reachable through own properties (enumerable or not, symbol keys too): what an inspector could show. */
function reachableStrings(root: unknown): string[] {
  const seen = new Set<unknown>();
  const out: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') out.push(value);
    if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value))
      return;
    seen.add(value);
    for (const key of Reflect.ownKeys(value)) {
      const descriptor = Object.getOwnPropertyDescriptor(value, key);
      if (descriptor && 'value' in descriptor) walk(descriptor.value);
    }
  };
  walk(root);
  return out;
}

describe('click cookie codec', () => {
  it('round-trips every valid token and click time inside the window', async () => {
    await fc.assert(
      fc.asyncProperty(tokenArb, fc.integer({ min: NOW - WINDOW, max: NOW }), async (token, clickedAt) => {
        const value = await codec.encode({ token, clickedAt });
        // 52 base64url characters, a dot, the token: every character valid in a cookie value.
        expect(value).toBe(`${value.slice(0, 52)}.${token}`);
        expect(value.slice(0, 52)).toMatch(/^[A-Za-z0-9_-]{52}$/);
        expect(await codec.decode(value, NOW)).toEqual({ ok: true, click: { token, clickedAt } });
      }),
      { numRuns: 200 },
    );
  });

  it('rejects every tampered cookie: a changed, removed, added or cut character', async () => {
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), char: fc.constantFrom(...ALPHABET) }),
      fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
      fc.record({
        kind: fc.constant('insert' as const),
        at: fc.nat(),
        char: fc.constantFrom(...ALPHABET, '=', '.', '%'),
      }),
      fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(
        tokenArb,
        fc.integer({ min: NOW - WINDOW, max: NOW }),
        mutation,
        async (token, clickedAt, m) => {
          const value = await codec.encode({ token, clickedAt });
          const at = m.at % value.length;
          const tampered =
            m.kind === 'replace'
              ? value.slice(0, at) + m.char + value.slice(at + 1)
              : m.kind === 'delete'
                ? value.slice(0, at) + value.slice(at + 1)
                : m.kind === 'insert'
                  ? value.slice(0, at) + m.char + value.slice(at)
                  : value.slice(0, at);
          fc.pre(tampered !== value);
          expect((await codec.decode(tampered, NOW)).ok).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rejects a cookie signed with a secret it does not hold', async () => {
    const other = createClickCookieCodec({ ...base, secrets: ['another-secret-0123456789-abcdefghijk'] });
    const value = await other.encode({ token: 'tok_aaaaaaaaaaaaaaaaaaaaaa', clickedAt: NOW });
    expect(await codec.decode(value, NOW)).toEqual({ ok: false, problem: 'signature' });
  });

  it('signs with the first secret and verifies with any of them, so secrets rotate', async () => {
    const before = createClickCookieCodec({ ...base, secrets: [OLD_SECRET] });
    const rotated = createClickCookieCodec({ ...base, secrets: [SECRET, OLD_SECRET] });
    const oldCookie = await before.encode({ token: 'tok_aaaaaaaaaaaaaaaaaaaaaa', clickedAt: NOW });
    expect(await rotated.decode(oldCookie, NOW)).toEqual({
      ok: true,
      click: { token: 'tok_aaaaaaaaaaaaaaaaaaaaaa', clickedAt: NOW },
    });
    const newCookie = await rotated.encode({ token: 'tok_bbbbbbbbbbbbbbbbbbbbbb', clickedAt: NOW });
    expect((await codec.decode(newCookie, NOW)).ok).toBe(true);
    expect((await before.decode(newCookie, NOW)).ok).toBe(false);
  });

  it('rejects an unsigned cookie, a bare token, and a cookie of another layout version', async () => {
    const token = 'tok_aaaaaaaaaaaaaaaaaaaaaa';
    const value = await codec.encode({ token, clickedAt: NOW });
    const binary = decodeBase64Url(value.slice(0, 52)) as Uint8Array;
    const unsigned = binary.slice();
    unsigned.fill(0, 7);
    expect(await codec.decode(`${encodeBase64Url(unsigned)}.${token}`, NOW)).toEqual({
      ok: false,
      problem: 'signature',
    });
    expect(await codec.decode(token, NOW)).toEqual({ ok: false, problem: 'malformed' });
    expect(await codec.decode(`${value.slice(0, 52)}.`, NOW)).toEqual({ ok: false, problem: 'malformed' });
    const v1 = binary.slice();
    v1[0] = 1;
    expect(await codec.decode(`${encodeBase64Url(v1)}.${token}`, NOW)).toEqual({
      ok: false,
      problem: 'version',
    });
  });

  it('signs under a key of its own: a plain HMAC of the same bytes with the secret is refused', async () => {
    const token = 'tok_aaaaaaaaaaaaaaaaaaaaaa';
    const value = await codec.encode({ token, clickedAt: NOW });
    const binary = decodeBase64Url(value.slice(0, 52)) as Uint8Array;
    const signed = new Uint8Array([...new TextEncoder().encode(token), ...binary.subarray(0, 7)]);
    const plainMac = await webCryptoHmac(encoder.encode(SECRET))(signed);
    const forged = new Uint8Array([...binary.subarray(0, 7), ...plainMac]);
    expect(await codec.decode(`${encodeBase64Url(forged)}.${token}`, NOW)).toEqual({
      ok: false,
      problem: 'signature',
    });
  });

  it('gives the same cookie whichever HMAC implementation signs it', async () => {
    const web = createClickCookieCodec({ ...base, secrets: [SECRET], hmac: webCryptoHmac });
    const node = createClickCookieCodec({ ...base, secrets: [SECRET], hmac: nodeHmac });
    await fc.assert(
      fc.asyncProperty(tokenArb, fc.integer({ min: NOW - WINDOW, max: NOW }), async (token, clickedAt) => {
        const value = await codec.encode({ token, clickedAt });
        expect(await web.encode({ token, clickedAt })).toBe(value);
        expect(node.encodeNow({ token, clickedAt })).toBe(value);
        expect(await web.decode(value, NOW)).toEqual({ ok: true, click: { token, clickedAt } });
      }),
      { numRuns: 50 },
    );
  });

  it('refuses to sign a token that is not ASCII, on every signing path', async () => {
    const node = createClickCookieCodec({ ...base, secrets: [SECRET], hmac: nodeHmac });
    const web = createClickCookieCodec({ ...base, secrets: [SECRET], hmac: webCryptoHmac });
    for (const token of ['tok_ééééééééééééééééé', 'tok_aaaaaaaaaaaaaaaaaaaa\u{1F600}']) {
      expect(() => codec.encodeNow({ token, clickedAt: NOW })).toThrow(RangeError);
      expect(() => node.encodeNow({ token, clickedAt: NOW })).toThrow(RangeError);
      await expect(web.encode({ token, clickedAt: NOW })).rejects.toThrow(RangeError);
    }
  });

  it('verifies cookies signed before signing moved to the platform HMACs (by our own SHA-256 in WebAssembly)', async () => {
    // Captured from the old code: secret, click time and token in, cookie value out (layout version 2).
    const secret = 'fixture-secret-0123456789-abcdefghijklmn';
    const clickedAt = Date.UTC(2026, 0, 15, 12, 0, 0);
    const fixtures: Array<[token: string, cookie: string]> = [
      [
        'tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd',
        'AgGbwYbeADAumehq-uD7okvkwD_5srqEcieBB9QKNJKwezW8Fxzr.tok_4kQ9xZ7pLm2Rv8sWc1Ny3Bd',
      ],
      [
        `tok_${'abcdefghij'.repeat(10)}.~-_XYZ`,
        `AgGbwYbeAEaTYBe3wJu1CQ0hlPb6QPpEasmEzFr2HmloMLO64ffR.tok_${'abcdefghij'.repeat(10)}.~-_XYZ`,
      ],
    ];
    for (const hmac of [webCryptoHmac, nodeHmac]) {
      const today = createClickCookieCodec({ ...base, secrets: [secret], hmac });
      for (const [token, cookie] of fixtures) {
        expect(await today.decode(cookie, clickedAt)).toEqual({ ok: true, click: { token, clickedAt } });
        expect(await today.encode({ token, clickedAt })).toBe(cookie);
      }
    }
  });

  it('rejects a click older than the window and one further in the future than the allowed clock skew', async () => {
    const token = 'tok_aaaaaaaaaaaaaaaaaaaaaa';
    expect((await codec.decode(await codec.encode({ token, clickedAt: NOW - WINDOW }), NOW)).ok).toBe(true);
    expect(await codec.decode(await codec.encode({ token, clickedAt: NOW - WINDOW - 1 }), NOW)).toEqual({
      ok: false,
      problem: 'expired',
    });
    expect(
      (await codec.decode(await codec.encode({ token, clickedAt: NOW + DEFAULT_MAX_CLOCK_SKEW_MS }), NOW)).ok,
    ).toBe(true);
    expect(
      await codec.decode(await codec.encode({ token, clickedAt: NOW + DEFAULT_MAX_CLOCK_SKEW_MS + 1 }), NOW),
    ).toEqual({
      ok: false,
      problem: 'future',
    });
  });

  it('rejects a signed token that the current token rules no longer accept', async () => {
    const lenient = createClickCookieCodec({ ...base, tokenMinLength: 4, secrets: [SECRET] });
    const value = await lenient.encode({ token: 'short', clickedAt: NOW });
    expect(await codec.decode(value, NOW)).toEqual({ ok: false, problem: 'token' });
  });

  it('never shows its secrets when inspected or serialised', async () => {
    await codec.encode({ token: 'tok_aaaaaaaaaaaaaaaaaaaaaa', clickedAt: NOW });
    expect(reachableStrings(codec).some((s) => s.includes(SECRET))).toBe(false);
    expect(JSON.stringify(codec)).not.toContain(SECRET);
  });
});

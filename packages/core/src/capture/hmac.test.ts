/** The plain-JavaScript HMAC-SHA256 against RFC 4231's vectors, `node:crypto` and Web Crypto. */
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsHmac, webCryptoHmac } from './cookie-codec.ts';
import { hmacSha256Signer, sha256 } from './sha256-hmac.ts';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const fromHex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));

describe('HMAC-SHA256 in plain JavaScript', () => {
  it('gives the RFC 4231 test vectors', () => {
    const vectors: Array<[key: string, data: string, mac: string]> = [
      // Test case 1: 20-byte key.
      [
        '0b'.repeat(20),
        hex(Buffer.from('Hi There')),
        'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
      ],
      // Test case 2: short key.
      [
        hex(Buffer.from('Jefe')),
        hex(Buffer.from('what do ya want for nothing?')),
        '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
      ],
      // Test case 3: 50 bytes of data, one block boundary crossed by the padding.
      ['aa'.repeat(20), 'dd'.repeat(50), '773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe'],
      // Test case 6: a 131-byte key (hashed first) and 54 bytes of data.
      [
        'aa'.repeat(131),
        hex(Buffer.from('Test Using Larger Than Block-Size Key - Hash Key First')),
        '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
      ],
    ];
    for (const [key, data, mac] of vectors)
      expect(hex(hmacSha256Signer(fromHex(key))(fromHex(data)))).toBe(mac);
  });

  it('equals node:crypto for any key and message length (block and padding boundaries included), in WebAssembly and in JavaScript', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        fc.uint8Array({ maxLength: 300 }),
        fc.boolean(),
        (key, data, webAssembly) => {
          const sign = hmacSha256Signer(key, { webAssembly });
          const expected = createHmac('sha256', key).update(data).digest('hex');
          expect(hex(sign(data))).toBe(expected);
          expect(hex(sign(data))).toBe(expected); // a signer is reusable: no state leaks between calls
        },
      ),
      { numRuns: 1000 },
    );
    for (let length = 0; length <= 130; length++) {
      const data = new Uint8Array(length).fill(length);
      expect(hex(sha256(data))).toBe(createHash('sha256').update(data).digest('hex'));
    }
  });

  it('gives the same MAC as Web Crypto, so cookies move between edge and Node code', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 80 }),
        fc.uint8Array({ maxLength: 120 }),
        async (secret, data) => {
          expect(hex(await jsHmac(secret)(data))).toBe(hex(await webCryptoHmac(secret)(data)));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('serves messages too long for the WebAssembly page, and signers of different keys in turn', () => {
    const long = new Uint8Array(70_000).map((_, i) => i * 7);
    const a = hmacSha256Signer(new Uint8Array([1]));
    const b = hmacSha256Signer(new Uint8Array([2]));
    expect(hex(a(long))).toBe(
      createHmac('sha256', new Uint8Array([1]))
        .update(long)
        .digest('hex'),
    );
    for (let length = 0; length < 140; length += 13) {
      const data = long.subarray(0, length);
      expect(hex(a(data))).toBe(
        createHmac('sha256', new Uint8Array([1]))
          .update(data)
          .digest('hex'),
      );
      expect(hex(b(data))).toBe(
        createHmac('sha256', new Uint8Array([2]))
          .update(data)
          .digest('hex'),
      );
    }
  });

  it('keeps the generated module in step with its source (sha256-hmac.wat, from scripts/sha256-hmac-wat.ts)', async () => {
    const { generate } = await import('../../../../scripts/build-wasm.ts');
    const { sha256HmacWat } = await import('../../../../scripts/sha256-hmac-wat.ts');
    const wat = readFileSync(new URL('./sha256-hmac.wat', import.meta.url), 'utf8');
    expect(wat).toBe(sha256HmacWat());
    expect(await generate(wat)).toBe(readFileSync(new URL('./sha256-hmac.wasm.ts', import.meta.url), 'utf8'));
  });

  it('leaves no key material in the WebAssembly memory it exposes', () => {
    const key = new TextEncoder().encode('a-secret-key-0123456789-abcdefghijklmnop');
    const sign = hmacSha256Signer(key);
    const data = new Uint8Array([1, 2, 3]);
    expect(hex(sign(data))).toBe(createHmac('sha256', key).update(data).digest('hex'));
    const memory = sign.direct?.memory;
    expect(memory).toBeDefined();
    // The first 64 bytes held the inner and outer pad states (enough to forge MACs) during the call.
    expect([...(memory as Uint8Array).subarray(0, 64)].every((byte) => byte === 0)).toBe(true);
  });

  it('returns a fresh array per call, so a caller keeping one MAC is not overwritten by the next', () => {
    const sign = hmacSha256Signer(new Uint8Array([1, 2, 3]));
    const first = sign(new Uint8Array([1]));
    const copy = hex(first);
    sign(new Uint8Array([2]));
    expect(hex(first)).toBe(copy);
  });
});

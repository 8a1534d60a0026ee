/** The platform HMACs core signs with (Web Crypto, `node:crypto`) against RFC 4231's vectors and each other. */
import { createHmac, createSecretKey } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type HmacSha256, nodeCryptoHmac, sameBytes, webCryptoHmac, withDefaultHmac } from './hmac.ts';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const fromHex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'));
const nodeHmac = nodeCryptoHmac({ createHmac, createSecretKey });
const signers: Array<[name: string, hmac: HmacSha256]> = [
  ['Web Crypto (core’s default)', webCryptoHmac],
  ['node:crypto (the Node adapters’)', nodeHmac],
];

describe.each(signers)('HMAC-SHA256 on %s', (_name, hmac) => {
  it('gives the RFC 4231 test vectors', async () => {
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
    for (const [key, data, mac] of vectors) expect(hex(await hmac(fromHex(key))(fromHex(data)))).toBe(mac);
  });

  it('returns a fresh array per call, so a caller keeping one MAC is not overwritten by the next', async () => {
    const sign = hmac(new Uint8Array([1, 2, 3]));
    const first = await sign(new Uint8Array([1]));
    const copy = hex(first);
    await sign(new Uint8Array([2]));
    expect(hex(first)).toBe(copy);
  });
});

describe('the platform HMACs', () => {
  it('give the same MAC, so cookies move between edge and Node code; node:crypto’s synchronously', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Web Crypto refuses an empty key; secrets are at least 32 characters anyway.
        fc.uint8Array({ minLength: 1, maxLength: 200 }),
        fc.uint8Array({ maxLength: 300 }),
        async (key, data) => {
          const mac = nodeHmac(key)(data);
          expect(mac).toBeInstanceOf(Uint8Array);
          expect(hex(mac as Uint8Array)).toBe(hex(await webCryptoHmac(key)(data)));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('compares MACs byte for byte, whatever their contents', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ maxLength: 40 }), (a, b) => {
        expect(sameBytes(a, b)).toBe(hex(a) === hex(b));
        expect(sameBytes(a, a.slice())).toBe(true);
      }),
    );
  });

  it('fill in an adapter’s HMAC only where the app chose none', () => {
    type Options = { secrets: string[]; hmac?: HmacSha256 | undefined };
    const mine: HmacSha256 = () => () => new Uint8Array(32);
    const fill = (options: Options) => withDefaultHmac(options, nodeHmac);
    expect(fill({ secrets: ['s'] })).toEqual({ secrets: ['s'], hmac: nodeHmac });
    expect(fill({ secrets: ['s'], hmac: undefined }).hmac).toBe(nodeHmac);
    expect(fill({ secrets: ['s'], hmac: mine }).hmac).toBe(mine);
    expect(fill(null as unknown as Options)).toBeNull();
  });
});

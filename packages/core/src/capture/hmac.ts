/**
 * The HMAC-SHA256 that signs click cookies: always the platform's, never one of our own. Core's default is
 * Web Crypto ({@link webCryptoHmac}), present on every runtime (Node, Bun, Deno, Workers, Vercel Edge) and
 * asynchronous. The Node adapters (Express, Koa, Next.js on Node) hand core `node:crypto`'s synchronous
 * HMAC ({@link nodeCryptoHmac}) so a landing completes before the app runs; core itself imports nothing
 * from `node:`. Every implementation computes the same MAC, so a cookie signed at the edge verifies in a
 * Node route and back.
 */

/**
 * An HMAC-SHA256 bound to one key: returns the 32-byte MAC of `data`, synchronously or not.
 *
 * @example
 * ```ts
 * const sign = webCryptoHmac(new TextEncoder().encode(secret));
 * const mac = await sign(new TextEncoder().encode('data')); // 32-byte Uint8Array
 * ```
 */
export type HmacSha256 = (key: Uint8Array) => (data: Uint8Array) => Uint8Array | Promise<Uint8Array>;

/**
 * HMAC-SHA256 on Web Crypto (`globalThis.crypto.subtle`), available on every runtime: core's default. The
 * key is imported once, non-extractable, on the first call.
 *
 * @example
 * ```ts
 * const mac = await webCryptoHmac(key)(new TextEncoder().encode('data'));
 * ```
 */
export const webCryptoHmac: HmacSha256 = (keyBytes) => {
  let key: Promise<CryptoKey> | undefined;
  return async (data) => {
    key ??= globalThis.crypto.subtle.importKey(
      'raw',
      keyBytes as Uint8Array<ArrayBuffer>,
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    return new Uint8Array(
      await globalThis.crypto.subtle.sign('HMAC', await key, data as Uint8Array<ArrayBuffer>),
    );
  };
};

/**
 * The part of `node:crypto` a synchronous HMAC needs, described structurally so core never imports it
 * (Node's module fits as it is, and so do Bun's, Deno's and Workers' `node:crypto`).
 */
export interface NodeCryptoHmac<Key> {
  createSecretKey(key: Uint8Array): Key;
  createHmac(
    algorithm: 'sha256',
    key: Key,
  ): { update(data: Uint8Array): { digest(encoding: 'binary'): string } };
}

/**
 * HMAC-SHA256 on `node:crypto`, synchronous. The key becomes a `KeyObject` once (`createSecretKey`):
 * `createHmac` with raw key bytes imports the key on every call, several times the cost. The MAC is read
 * as a `'binary'` (latin1) string, one character per byte, and copied into a small `Uint8Array`: the `Buffer` that
 * `digest()` returns is made in C++ with memory of its own, which cost a server about 6 µs more CPU per
 * landing than the whole HMAC otherwise does (`bench/capture.ts`, Koa, Node 24), far more than in a loop.
 *
 * @example
 * ```ts
 * import { createHmac, createSecretKey } from 'node:crypto';
 * const hmac = nodeCryptoHmac({ createHmac, createSecretKey });
 * const mac = hmac(key)(new TextEncoder().encode('data')); // 32-byte Uint8Array, synchronously
 * ```
 */
export function nodeCryptoHmac<Key>(crypto: NodeCryptoHmac<Key>): HmacSha256 {
  return (keyBytes) => {
    const key = crypto.createSecretKey(keyBytes);
    return (data) => {
      // 'binary' is Node's (and Bun's, Deno's) older name of 'latin1'.
      const mac = crypto.createHmac('sha256', key).update(data).digest('binary');
      const bytes = new Uint8Array(mac.length);
      for (let i = 0; i < mac.length; i++) bytes[i] = mac.charCodeAt(i);
      return bytes;
    };
  };
}

/**
 * `options` with `hmac` set to the given one where the app left it out: how an adapter hands core its
 * runtime's synchronous HMAC. Anything but an object is passed on as it is, for the options check to refuse.
 *
 * @example
 * ```ts
 * const capture = createClickCapture(withDefaultHmac(options, nodeCryptoHmac({ createHmac, createSecretKey })));
 * ```
 */
export function withDefaultHmac<O extends { hmac?: HmacSha256 | undefined }>(
  options: O,
  hmac: HmacSha256,
): O {
  return typeof options === 'object' && options !== null && options.hmac === undefined
    ? { ...options, hmac }
    : options;
}

/**
 * Whether two MACs are equal, in time that does not depend on where they differ (only on their length,
 * which is public). Comparison, not cryptography: the platform has no portable one (`timingSafeEqual` is
 * Node's alone).
 *
 * @example
 * ```ts
 * sameBytes(expectedMac, receivedMac); // true or false, after looking at every byte
 * ```
 */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/**
 * HMAC-SHA256 (RFC 2104 over FIPS 180-4), synchronous on every runtime: WebAssembly where the runtime
 * may compile it (Node, Deno, Bun, browsers), the same algorithm in plain JavaScript where it may not
 * (Cloudflare Workers, Vercel Edge).
 *
 * Why not the platform's: the click cookie is signed on the landing request, inside the shopper's page
 * load. Web Crypto is asynchronous (each call a promise and a trip through the thread pool) and
 * `node:crypto` builds an OpenSSL context per call; measured inside an Express server, either costs several
 * times what this does. The key's inner and outer pad blocks are compressed once, when the signer is made,
 * so a cookie (7 bytes plus a token of up to 48 characters) costs two compressions: one for the message,
 * one for the outer hash. The WebAssembly module (`sha256-hmac.wat`) has native 32-bit rotations and
 * keeps the state in registers: about half the instructions of the JavaScript per block. Both use only
 * 32-bit additions, rotations and logic operations on the data, no table lookup indexed by secret or
 * message bytes, so their time does not depend on them.
 *
 * The result is the standard HMAC-SHA256 (checked against `node:crypto` and the RFC 4231 vectors), so a
 * cookie signed here verifies with Web Crypto and back.
 */
import { decodeBase64Url } from './base64url.ts';
import { SHA256_HMAC_WASM } from './sha256-hmac.wasm.ts';

const ROUND_CONSTANTS = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
const INITIAL = new Int32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);
const BLOCK_BYTES = 64;

// Scratch space shared by all signers: signing is synchronous, so no two calls interleave.
const SCHEDULE = new Int32Array(64);
const state = new Int32Array(8);
const block = new Uint8Array(BLOCK_BYTES);

/**
 * Compresses the 64-byte block of `bytes` at `offset` into `h` (8 words), in place. Every sum is cut to
 * 32 bits after each pair of terms (`| 0`), which keeps V8 on integer arithmetic.
 */
function compress(h: Int32Array, bytes: Uint8Array, offset: number): void {
  // Locals, not module bindings, inside the loops: no binding lookups per round.
  const W = SCHEDULE;
  const K = ROUND_CONSTANTS;
  for (let i = 0; i < 16; i++) {
    const j = offset + i * 4;
    W[i] =
      ((bytes[j] as number) << 24) |
      ((bytes[j + 1] as number) << 16) |
      ((bytes[j + 2] as number) << 8) |
      (bytes[j + 3] as number);
  }
  for (let i = 16; i < 64; i++) {
    let u = W[i - 2] as number;
    const s1 = ((u >>> 17) | (u << 15)) ^ ((u >>> 19) | (u << 13)) ^ (u >>> 10);
    u = W[i - 15] as number;
    const s0 = ((u >>> 7) | (u << 25)) ^ ((u >>> 18) | (u << 14)) ^ (u >>> 3);
    W[i] = (((s1 + (W[i - 7] as number)) | 0) + ((s0 + (W[i - 16] as number)) | 0)) | 0;
  }
  let a = h[0] as number;
  let b = h[1] as number;
  let c = h[2] as number;
  let d = h[3] as number;
  let e = h[4] as number;
  let f = h[5] as number;
  let g = h[6] as number;
  let hh = h[7] as number;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const ch = (e & f) ^ (~e & g);
    const t1 = (((S1 + ch) | 0) + ((hh + (((K[i] as number) + (W[i] as number)) | 0)) | 0)) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    hh = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  h[0] = ((h[0] as number) + a) | 0;
  h[1] = ((h[1] as number) + b) | 0;
  h[2] = ((h[2] as number) + c) | 0;
  h[3] = ((h[3] as number) + d) | 0;
  h[4] = ((h[4] as number) + e) | 0;
  h[5] = ((h[5] as number) + f) | 0;
  h[6] = ((h[6] as number) + g) | 0;
  h[7] = ((h[7] as number) + hh) | 0;
}

/**
 * Hashes `data[0, length)` into `h`, which already holds the state after `prefixBytes` bytes (a multiple
 * of 64): the remaining full blocks, then the final padded block(s) with the total length in bits.
 */
function finish(h: Int32Array, data: Uint8Array, length: number, prefixBytes: number): void {
  let offset = 0;
  for (; offset + BLOCK_BYTES <= length; offset += BLOCK_BYTES) compress(h, data, offset);
  const rest = length - offset;
  for (let i = 0; i < rest; i++) block[i] = data[offset + i] as number;
  block[rest] = 0x80;
  let zeroFrom = rest + 1;
  if (rest >= BLOCK_BYTES - 8) {
    for (let i = zeroFrom; i < BLOCK_BYTES; i++) block[i] = 0;
    compress(h, block, 0);
    zeroFrom = 0;
  }
  for (let i = zeroFrom; i < 56; i++) block[i] = 0;
  // Lengths here stay far below 2^53 bits; split into two 32-bit words (bitwise operators are 32-bit).
  const bits = (prefixBytes + length) * 8;
  const high = Math.floor(bits / 2 ** 32);
  block[56] = high >>> 24;
  block[57] = (high >>> 16) & 0xff;
  block[58] = (high >>> 8) & 0xff;
  block[59] = high & 0xff;
  block[60] = bits >>> 24;
  block[61] = (bits >>> 16) & 0xff;
  block[62] = (bits >>> 8) & 0xff;
  block[63] = bits & 0xff;
  compress(h, block, 0);
}

function digestInto(h: Int32Array, out: Uint8Array, at: number): void {
  for (let i = 0; i < 8; i++) {
    const word = h[i] as number;
    const j = at + i * 4;
    out[j] = word >>> 24;
    out[j + 1] = (word >>> 16) & 0xff;
    out[j + 2] = (word >>> 8) & 0xff;
    out[j + 3] = word & 0xff;
  }
}

/** SHA-256 of `data` (used for keys longer than a block, as RFC 2104 says). */
export function sha256(data: Uint8Array): Uint8Array {
  state.set(INITIAL);
  finish(state, data, data.length, 0);
  const out = new Uint8Array(32);
  digestInto(state, out, 0);
  return out;
}

/** The hash state after one block of the key XORed with `pad`. */
function padState(key: Uint8Array, pad: number): Int32Array {
  const padded = new Uint8Array(BLOCK_BYTES).fill(pad);
  for (let i = 0; i < key.length; i++) padded[i] = (key[i] as number) ^ pad;
  const h = new Int32Array(INITIAL);
  compress(h, padded, 0);
  return h;
}

/** The WebAssembly HMAC's memory and entry point (see the layout in `sha256-hmac.wat`). */
interface WasmHmac {
  bytes: Uint8Array;
  words: Int32Array;
  hmac(length: number): void;
}

const WASM_MESSAGE = 1024;
const WASM_MAC = 72;
/** The longest message the module's one page holds (it pads in place). */
const WASM_MAX_MESSAGE = 65_536 - WASM_MESSAGE - 72;

let wasmHmac: WasmHmac | null | undefined;

/** The module, compiled once; null where the runtime forbids compiling code or is big-endian. */
function loadWasm(): WasmHmac | null {
  if (wasmHmac !== undefined) return wasmHmac;
  wasmHmac = null;
  try {
    // The state words are written through an Int32Array, in the host's byte order; wasm's is little-endian.
    if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1) return null;
    const module = new WebAssembly.Module(decodeBase64Url(SHA256_HMAC_WASM) as Uint8Array<ArrayBuffer>);
    const exports = new WebAssembly.Instance(module).exports as {
      memory: WebAssembly.Memory;
      hmac(length: number): void;
    };
    const buffer = exports.memory.buffer;
    wasmHmac = { bytes: new Uint8Array(buffer), words: new Int32Array(buffer), hmac: exports.hmac };
  } catch {
    // Workers and edge runtimes refuse to compile code at run time: the JavaScript below serves them.
  }
  return wasmHmac;
}

/** An HMAC-SHA256 signer bound to one key. */
export interface HmacSha256Signer {
  /** A new 32-byte MAC of `data`. */
  (data: Uint8Array): Uint8Array;
  /** Writes the MAC of `data[0, length)` to `out[at, at + 32)`, allocating nothing. */
  into(data: Uint8Array, length: number, out: Uint8Array, at: number): void;
  /**
   * With WebAssembly only: sign in the module's memory with no copy at all (the cookie codec's landing
   * path). Write the message to `memory[messageAt, messageAt + length)`, call `sign(length)`, read the MAC
   * at `memory[macAt, macAt + 32)`; the 7 bytes before `macAt` are the caller's to use. Valid until the
   * next signing call of any signer.
   */
  direct?: {
    memory: Uint8Array;
    messageAt: number;
    macAt: number;
    maxLength: number;
    sign(length: number): void;
  };
}

/** Which implementation a signer uses: WebAssembly when the runtime allows it (the default), or JavaScript. */
export interface HmacSha256SignerOptions {
  /** @defaultValue true */
  webAssembly?: boolean;
}

/**
 * An HMAC-SHA256 signer bound to one key.
 *
 * @example
 * ```ts
 * const sign = hmacSha256Signer(new TextEncoder().encode('key'));
 * sign(new TextEncoder().encode('The quick brown fox jumps over the lazy dog')); // f7bc83f4…
 * ```
 */
export function hmacSha256Signer(key: Uint8Array, options: HmacSha256SignerOptions = {}): HmacSha256Signer {
  const blockKey = key.length > BLOCK_BYTES ? sha256(key) : key;
  const inner = padState(blockKey, 0x36);
  const outer = padState(blockKey, 0x5c);
  const innerDigest = new Uint8Array(32);
  const wasm = options.webAssembly === false ? null : loadWasm();
  const inJs = (data: Uint8Array, length: number, out: Uint8Array, at: number): void => {
    state.set(inner);
    finish(state, data, length, BLOCK_BYTES);
    digestInto(state, innerDigest, 0);
    state.set(outer);
    finish(state, innerDigest, 32, BLOCK_BYTES);
    digestInto(state, out, at);
  };
  // Both pad states side by side, as the module's memory holds them: one copy per MAC instead of two.
  const pads = new Int32Array(16);
  pads.set(inner, 0);
  pads.set(outer, 8);
  const sign = (length: number): void => {
    const { words } = wasm as WasmHmac;
    words.set(pads);
    (wasm as WasmHmac).hmac(length);
  };
  const into =
    wasm === null
      ? inJs
      : (data: Uint8Array, length: number, out: Uint8Array, at: number): void => {
          if (length > WASM_MAX_MESSAGE) {
            inJs(data, length, out, at);
            return;
          }
          const { bytes } = wasm;
          for (let i = 0; i < length; i++) bytes[WASM_MESSAGE + i] = data[i] as number;
          sign(length);
          for (let i = 0; i < 32; i++) out[at + i] = bytes[WASM_MAC + i] as number;
        };
  const direct =
    wasm === null
      ? undefined
      : {
          memory: wasm.bytes,
          messageAt: WASM_MESSAGE,
          macAt: WASM_MAC,
          maxLength: WASM_MAX_MESSAGE,
          sign,
        };
  return Object.assign(
    (data: Uint8Array): Uint8Array => {
      const mac = new Uint8Array(32);
      into(data, data.length, mac, 0);
      return mac;
    },
    direct === undefined ? { into } : { into, direct },
  );
}

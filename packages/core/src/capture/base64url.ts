/**
 * Strict base64url (RFC 4648 §5, no padding) for the click cookie. Strict on purpose: a decoder that
 * accepted non-canonical text (stray characters, non-zero trailing bits) would let two different cookie
 * strings carry the same signed bytes, so "a tampered cookie is rejected" would not hold.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const DECODE = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

// The alphabet's character codes: the encoder writes codes, not one-character strings.
const CODES = Array.from(ALPHABET, (char) => char.charCodeAt(0));

/**
 * The output's character codes, reused from call to call (reallocated only when the length changes; the
 * click cookie's is always 52), turned into a string by one `String.fromCharCode.apply`. That makes one
 * flat string and allocates nothing else; concatenating pieces made a tree of ~30 strings (about 700
 * bytes) that every later reader (Node's header check, the socket write) first had to flatten.
 */
let codes: number[] = [];

/** Longest input encoded in one piece (a multiple of 3, and few enough arguments for any engine's `apply`). */
const CHUNK_BYTES = 3 * 1024;

/** Encodes `bytes[start, end)` (all of them by default) as base64url without padding. */
export function encodeBase64Url(bytes: Uint8Array, start = 0, end = bytes.length): string {
  if (end - start > CHUNK_BYTES) {
    let out = '';
    for (let from = start; from < end; from += CHUNK_BYTES) {
      out += encodeBase64Url(bytes, from, Math.min(from + CHUNK_BYTES, end));
    }
    return out;
  }
  const rest = (end - start) % 3;
  const whole = end - rest;
  const length = ((whole - start) / 3) * 4 + (rest === 0 ? 0 : rest + 1);
  if (codes.length !== length) codes = Array.from({ length }, () => 0);
  let o = 0;
  for (let i = start; i < whole; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    codes[o] = CODES[n >> 18] as number;
    codes[o + 1] = CODES[(n >> 12) & 63] as number;
    codes[o + 2] = CODES[(n >> 6) & 63] as number;
    codes[o + 3] = CODES[n & 63] as number;
    o += 4;
  }
  if (rest > 0) {
    const n = ((bytes[whole] as number) << 16) | (rest === 2 ? (bytes[whole + 1] as number) << 8 : 0);
    codes[o] = CODES[n >> 18] as number;
    codes[o + 1] = CODES[(n >> 12) & 63] as number;
    if (rest === 2) codes[o + 2] = CODES[(n >> 6) & 63] as number;
  }
  return String.fromCharCode.apply(null, codes);
}

/** Decodes canonical unpadded base64url; returns null for any other text. */
export function decodeBase64Url(text: string): Uint8Array | null {
  const rest = text.length % 4;
  if (rest === 1) return null;
  const out = new Uint8Array((text.length >> 2) * 3 + (rest === 0 ? 0 : rest - 1));
  let o = 0;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const value = code < 128 ? (DECODE[code] as number) : -1;
    if (value < 0) return null;
    acc = (acc << 6) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
      acc &= (1 << bits) - 1;
    }
  }
  // Leftover bits must be zero, else another string would decode to the same bytes.
  if (acc !== 0) return null;
  return out;
}

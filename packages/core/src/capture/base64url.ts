/**
 * Strict base64url (RFC 4648 §5, no padding) for the click cookie. Strict on purpose: a decoder that
 * accepted non-canonical text (stray characters, non-zero trailing bits) would let two different cookie
 * strings carry the same signed bytes, so "a tampered cookie is rejected" would not hold.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const DECODE = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

// Two output characters per 12 bits: half the lookups and concatenations of a per-character loop.
const PAIRS: string[] = [];
for (let i = 0; i < 4096; i++) PAIRS.push(ALPHABET.charAt(i >> 6) + ALPHABET.charAt(i & 63));

/** Encodes `bytes[start, end)` (all of them by default) as base64url without padding. */
export function encodeBase64Url(bytes: Uint8Array, start = 0, end = bytes.length): string {
  let out = '';
  let i = start;
  for (; i + 2 < end; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out += (PAIRS[n >> 12] as string) + (PAIRS[n & 4095] as string);
  }
  const rest = end - i;
  if (rest === 1) {
    const n = (bytes[i] as number) << 16;
    out += ALPHABET.charAt(n >> 18) + ALPHABET.charAt((n >> 12) & 63);
  } else if (rest === 2) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8);
    out += ALPHABET.charAt(n >> 18) + ALPHABET.charAt((n >> 12) & 63) + ALPHABET.charAt((n >> 6) & 63);
  }
  return out;
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

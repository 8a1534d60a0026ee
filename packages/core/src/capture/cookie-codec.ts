/**
 * The signed click cookie's value: `base64url(version ‖ clickedAt ‖ token ‖ mac)`.
 *
 * - version: one byte, {@link CLICK_COOKIE_VERSION}; any other version is refused, so the layout can change.
 * - clickedAt: 6 bytes big-endian epoch milliseconds (good until the year 10889).
 * - token: the click token's ASCII bytes (its length is what is left).
 * - mac: HMAC-SHA256 over a fixed context label and the bytes before it (32 bytes). The label keeps a
 *   secret shared with other cookies from making their signatures valid here.
 *
 * Signing uses the first secret; verification accepts any, so secrets rotate by prepending a new one and
 * dropping the old one after the window. A `clickedAt` further in the future than the outbox's allowed
 * clock skew (`DEFAULT_MAX_CLOCK_SKEW_MS`) is refused, as the outbox would refuse it.
 *
 * The HMAC is Web Crypto's by default, so this runs on Node, Bun, Deno and edge runtimes; a faster
 * implementation of the same function can be passed (the Node adapters pass `node:crypto`'s). Secrets
 * live only in closures, never in a property.
 */
import type { ClickStamp } from '../click.ts';
import { DEFAULT_MAX_CLOCK_SKEW_MS } from '../queue/validation.ts';
import { decodeBase64Url, encodeBase64Url } from './base64url.ts';
import { checkClickToken, type TokenRules } from './token.ts';

/** The layout version written into every cookie. */
export const CLICK_COOKIE_VERSION = 1;

const MAC_BYTES = 32;
const HEADER_BYTES = 7;
const MAX_CLICKED_AT = 2 ** 48 - 1;
const encoder = new TextEncoder();
const CONTEXT = encoder.encode('postback/click-cookie\0');

/** Why a cookie value was refused. */
export type CookieProblem = 'malformed' | 'version' | 'signature' | 'token' | 'expired' | 'future';

/** Result of {@link ClickCookieCodec.decode}. */
export type DecodedCookie = { ok: true; click: ClickStamp } | { ok: false; problem: CookieProblem };

/** Signs and verifies click cookie values. */
export interface ClickCookieCodec {
  /** The cookie value for a click (signed with the first secret). */
  encode(click: ClickStamp): Promise<string>;
  /** As `encode`, but synchronous when the HMAC is (the landing fast path uses it). May throw a RangeError. */
  encodeNow(click: ClickStamp): string | Promise<string>;
  /** Verifies a cookie value and checks the click is still inside the window at `now`. Never throws on bad input. */
  decode(value: string, now: number): Promise<DecodedCookie>;
}

/**
 * An HMAC-SHA256 bound to one secret: returns the 32-byte MAC of `data`, synchronously or not. All
 * implementations compute the same MAC, so a cookie signed by an edge middleware (Web Crypto) verifies in
 * a Node route (`node:crypto`) and back.
 */
export type HmacSha256 = (secret: string) => (data: Uint8Array) => Uint8Array | Promise<Uint8Array>;

/**
 * HMAC-SHA256 on Web Crypto (`globalThis.crypto.subtle`), available on every runtime. The key is
 * imported once, non-extractable.
 *
 * @example
 * ```ts
 * const mac = await webCryptoHmac(secret)(new TextEncoder().encode('data'));
 * ```
 */
export const webCryptoHmac: HmacSha256 = (secret) => {
  let key: Promise<CryptoKey> | undefined;
  return async (data) => {
    key ??= globalThis.crypto.subtle.importKey(
      'raw',
      encoder.encode(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    return new Uint8Array(
      await globalThis.crypto.subtle.sign('HMAC', await key, data as Uint8Array<ArrayBuffer>),
    );
  };
};

/** Options of {@link createClickCookieCodec}; validated by the capture options schema. */
export interface ClickCookieCodecOptions extends TokenRules {
  secrets: readonly string[];
  confirmWindowMs: number;
  /** @defaultValue {@link webCryptoHmac} */
  hmac?: HmacSha256 | undefined;
}

function withContext(bytes: Uint8Array): Uint8Array {
  const data = new Uint8Array(CONTEXT.length + bytes.length);
  data.set(CONTEXT);
  data.set(bytes, CONTEXT.length);
  return data;
}

/** Compares two MACs in time independent of where they differ. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/**
 * Creates the codec.
 *
 * @example
 * ```ts
 * const codec = createClickCookieCodec({ secrets: [process.env.COOKIE_SECRET!], confirmWindowMs: DEFAULT_CONFIRM_WINDOW_MS,
 *   tokenMinLength: 16, tokenMaxLength: 256 });
 * const value = await codec.encode({ token: 'tok_0123456789abcdef01', clickedAt: Date.now() });
 * const decoded = await codec.decode(value, Date.now()); // { ok: true, click: { token, clickedAt } }
 * ```
 */
export function createClickCookieCodec(options: ClickCookieCodecOptions): ClickCookieCodec {
  const rules: TokenRules = {
    tokenMinLength: options.tokenMinLength,
    tokenMaxLength: options.tokenMaxLength,
  };
  const windowMs = options.confirmWindowMs;
  // One signer per secret, newest first; the secrets themselves stay inside the signers' closures.
  const signers = options.secrets.map(options.hmac ?? webCryptoHmac);
  if (signers.length === 0) throw new RangeError('at least one secret is required');
  const signWithNewest = signers[0] as ReturnType<HmacSha256>;

  function encodeNow(click: ClickStamp): string | Promise<string> {
    const { token, clickedAt } = click;
    if (!Number.isSafeInteger(clickedAt) || clickedAt < 0 || clickedAt > MAX_CLICKED_AT) {
      throw new RangeError('clickedAt must be a non-negative integer of epoch milliseconds');
    }
    // One buffer: context label ‖ version ‖ clickedAt ‖ token ‖ mac; the label is signed, not sent.
    const start = CONTEXT.length;
    const bodyEnd = start + HEADER_BYTES + token.length;
    const buffer = new Uint8Array(bodyEnd + MAC_BYTES);
    buffer.set(CONTEXT);
    buffer[start] = CLICK_COOKIE_VERSION;
    // 48-bit big-endian: high 16 bits, then low 32 (bitwise operators are 32-bit).
    const high = Math.floor(clickedAt / 2 ** 32);
    const low = clickedAt % 2 ** 32;
    buffer[start + 1] = high >>> 8;
    buffer[start + 2] = high & 0xff;
    buffer[start + 3] = low >>> 24;
    buffer[start + 4] = (low >>> 16) & 0xff;
    buffer[start + 5] = (low >>> 8) & 0xff;
    buffer[start + 6] = low & 0xff;
    for (let i = 0; i < token.length; i++) {
      const code = token.charCodeAt(i);
      // Tokens are ASCII by the token rules; anything else is a caller's bug, not a cookie to sign.
      if (code > 0x7e) throw new RangeError('click token must be ASCII');
      buffer[start + HEADER_BYTES + i] = code;
    }
    const mac = signWithNewest(buffer.subarray(0, bodyEnd));
    if (mac instanceof Uint8Array) {
      buffer.set(mac, bodyEnd);
      return encodeBase64Url(buffer.subarray(start));
    }
    return mac.then((asyncMac) => {
      buffer.set(asyncMac, bodyEnd);
      return encodeBase64Url(buffer.subarray(start));
    });
  }

  return {
    async encode(click) {
      return encodeNow(click);
    },
    encodeNow,

    async decode(value, now) {
      const bytes = decodeBase64Url(value);
      if (bytes === null || bytes.length < HEADER_BYTES + 1 + MAC_BYTES)
        return { ok: false, problem: 'malformed' };
      if (bytes[0] !== CLICK_COOKIE_VERSION) return { ok: false, problem: 'version' };
      const body = bytes.subarray(0, bytes.length - MAC_BYTES);
      const mac = bytes.subarray(bytes.length - MAC_BYTES);
      const data = withContext(body);
      let valid = false;
      for (const sign of signers) {
        if (sameBytes(await sign(data), mac)) {
          valid = true;
          break;
        }
      }
      if (!valid) return { ok: false, problem: 'signature' };
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
      const clickedAt = view.getUint16(1) * 2 ** 32 + view.getUint32(3);
      // Bytes above 0x7e become characters the token rules refuse, so no UTF-8 decoding is needed.
      const token = String.fromCharCode(...body.subarray(HEADER_BYTES));
      if (checkClickToken(token, rules) !== null) return { ok: false, problem: 'token' };
      if (clickedAt > now + DEFAULT_MAX_CLOCK_SKEW_MS) return { ok: false, problem: 'future' };
      if (now - clickedAt > windowMs) return { ok: false, problem: 'expired' };
      return { ok: true, click: { token, clickedAt } };
    },
  };
}

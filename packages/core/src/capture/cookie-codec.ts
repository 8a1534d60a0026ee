/**
 * The signed click cookie's value: `base64url(version ‖ clickedAt ‖ token ‖ mac)`.
 *
 * - version: one byte, {@link CLICK_COOKIE_VERSION}; any other version is refused, so the layout can change.
 * - clickedAt: 6 bytes big-endian epoch milliseconds (good until the year 10889).
 * - token: the click token's UTF-8 bytes (its length is what is left).
 * - mac: HMAC-SHA256 over a fixed context label and the bytes before it (32 bytes). The label keeps a
 *   secret shared with other cookies from making their signatures valid here.
 *
 * Signing uses the first secret; verification accepts any, so secrets rotate by prepending a new one and
 * dropping the old one after the window. A `clickedAt` further in the future than the outbox's allowed
 * clock skew (`DEFAULT_MAX_CLOCK_SKEW_MS`) is refused, as the outbox would refuse it. Only Web Crypto: runs on Node, Bun, Deno and edge runtimes.
 * Secrets live only in this module's closure as non-extractable `CryptoKey`s.
 */
import type { ClickStamp } from '../click.ts';
import { decodeBase64Url, encodeBase64Url } from './base64url.ts';
import { DEFAULT_MAX_CLOCK_SKEW_MS } from '../queue/validation.ts';
import { checkClickToken, type TokenRules } from './token.ts';

/** The layout version written into every cookie. */
export const CLICK_COOKIE_VERSION = 1;


const MAC_BYTES = 32;
const HEADER_BYTES = 7;
const MAX_CLICKED_AT = 2 ** 48 - 1;
const CONTEXT = new TextEncoder().encode('postback/click-cookie\0');
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Why a cookie value was refused. */
export type CookieProblem = 'malformed' | 'version' | 'signature' | 'token' | 'expired' | 'future';

/** Result of {@link ClickCookieCodec.decode}. */
export type DecodedCookie = { ok: true; click: ClickStamp } | { ok: false; problem: CookieProblem };

/** Signs and verifies click cookie values. */
export interface ClickCookieCodec {
  /** The cookie value for a click (signed with the first secret). */
  encode(click: ClickStamp): Promise<string>;
  /** Verifies a cookie value and checks the click is still inside the window at `now`. Never throws. */
  decode(value: string, now: number): Promise<DecodedCookie>;
}

/** Options of {@link createClickCookieCodec}; validated by the capture options schema. */
export interface ClickCookieCodecOptions extends TokenRules {
  secrets: readonly string[];
  confirmWindowMs: number;
}

function importKey(secret: string): Promise<CryptoKey> {
  return globalThis.crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);
}

function withContext(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const data = new Uint8Array(CONTEXT.length + bytes.length);
  data.set(CONTEXT);
  data.set(bytes, CONTEXT.length);
  return data;
}

/**
 * Creates the codec. Keys are imported once, on first use.
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
  const secrets = [...options.secrets];
  const rules: TokenRules = { tokenMinLength: options.tokenMinLength, tokenMaxLength: options.tokenMaxLength };
  const windowMs = options.confirmWindowMs;
  let keys: Promise<CryptoKey[]> | undefined;
  const getKeys = (): Promise<CryptoKey[]> => {
    keys ??= Promise.all(secrets.map(importKey));
    return keys;
  };

  return {
    async encode(click) {
      const token = encoder.encode(click.token);
      if (!Number.isSafeInteger(click.clickedAt) || click.clickedAt < 0 || click.clickedAt > MAX_CLICKED_AT) {
        throw new RangeError('clickedAt must be a non-negative integer of epoch milliseconds');
      }
      const body = new Uint8Array(HEADER_BYTES + token.length);
      body[0] = CLICK_COOKIE_VERSION;
      // 48-bit big-endian: split into high 16 and low 32 bits (bitwise ops are 32-bit).
      const high = Math.floor(click.clickedAt / 2 ** 32);
      const low = click.clickedAt % 2 ** 32;
      body[1] = high >>> 8;
      body[2] = high & 0xff;
      new DataView(body.buffer).setUint32(3, low);
      body.set(token, HEADER_BYTES);
      const [key] = await getKeys();
      const mac = new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key as CryptoKey, withContext(body)));
      const out = new Uint8Array(body.length + MAC_BYTES);
      out.set(body);
      out.set(mac, body.length);
      return encodeBase64Url(out);
    },

    async decode(value, now) {
      const bytes = decodeBase64Url(value);
      if (bytes === null || bytes.length < HEADER_BYTES + 1 + MAC_BYTES) return { ok: false, problem: 'malformed' };
      if (bytes[0] !== CLICK_COOKIE_VERSION) return { ok: false, problem: 'version' };
      const body = bytes.subarray(0, bytes.length - MAC_BYTES);
      const mac = bytes.slice(bytes.length - MAC_BYTES);
      const data = withContext(body);
      let valid = false;
      for (const key of await getKeys()) {
        // subtle.verify compares in constant time.
        if (await globalThis.crypto.subtle.verify('HMAC', key, mac, data)) {
          valid = true;
          break;
        }
      }
      if (!valid) return { ok: false, problem: 'signature' };
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
      const clickedAt = view.getUint16(1) * 2 ** 32 + view.getUint32(3);
      let token: string;
      try {
        token = decoder.decode(body.subarray(HEADER_BYTES));
      } catch {
        return { ok: false, problem: 'token' };
      }
      if (checkClickToken(token, rules) !== null) return { ok: false, problem: 'token' };
      if (clickedAt > now + DEFAULT_MAX_CLOCK_SKEW_MS) return { ok: false, problem: 'future' };
      if (now - clickedAt > windowMs) return { ok: false, problem: 'expired' };
      return { ok: true, click: { token, clickedAt } };
    },
  };
}

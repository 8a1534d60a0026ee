/**
 * Capture options: the one schema that holds their types, defaults, validation and documentation. The
 * README option tables of core, express and koa are rendered from it ({@link renderCaptureOptionsTable})
 * and tests keep them equal. Hand-written rather than zod: several options are functions generic over
 * the framework's request, and core stays small for edge bundles.
 */
import type { ClickStore } from '../click.ts';
import { OptionsError } from '../errors.ts';
import { DEFAULT_CONFIRM_WINDOW_MS } from '../policy.ts';
import { MAX_CLICK_TOKEN_LENGTH } from '../queue/validation.ts';
import type { CookieProblem, HmacSha256, jsHmac, webCryptoHmac } from './cookie-codec.ts';
import {
  DEFAULT_CLICK_PARAM,
  DEFAULT_TOKEN_MAX_LENGTH,
  DEFAULT_TOKEN_MIN_LENGTH,
  type TokenProblem,
} from './token.ts';

/**
 * Name of the signed click cookie.
 * @defaultValue `'postback_click'`
 */
export const DEFAULT_COOKIE_NAME = 'postback_click';

/**
 * Shortest cookie secret accepted, in characters (32 random characters ≈ the 256-bit HMAC key size).
 * @defaultValue 32
 */
export const MIN_SECRET_LENGTH = 32;

/**
 * Which click an order is attributed to when a shopper clicked several ads.
 * @defaultValue `'last'`
 */
export const DEFAULT_ATTRIBUTION: Attribution = 'last';

/**
 * Status of the clean-URL redirect.
 * @defaultValue 302
 */
export const DEFAULT_CLEAN_URL_STATUS: 302 | 303 = 302;

/**
 * `last`: the newest click wins. `first`: the oldest click still inside the window wins. Either way, a
 * click is a token: the same token seen again (a landing URL reopened) keeps the time it was first seen.
 */
export type Attribution = 'last' | 'first';

/** What capture reports through `onInvalid`: a bad token in the URL, or a cookie that failed verification. */
export type InvalidClickEvent =
  | {
      source: 'url';
      /** The query parameter that held it. */
      param: string;
      reason: TokenProblem;
      /** The offending value, cut to 256 characters. Untrusted input: escape it before display. */
      value: string;
    }
  | { source: 'cookie'; reason: CookieProblem };

/**
 * The request as core sees it. A Fetch API `Request` (and Next's `NextRequest`) fits as it is; Node
 * adapters pass `{ url: req.originalUrl, headers: req.headers, method: req.method }`.
 */
export interface CaptureRequest {
  /** Absolute URL, or origin-form path with query (`/landing?click_token=…`). */
  readonly url: string;
  /** HTTP method; the clean-URL redirect is only made for GET and HEAD. Absent means GET. */
  readonly method?: string | undefined;
  /** A `Headers`-like getter, or Node's lower-cased header record. Only `cookie` is read. */
  readonly headers:
    | { get(name: string): string | null | undefined }
    | Readonly<Record<string, string | string[] | undefined>>;
  /**
   * The `Cookie` header, when the adapter has it at hand (Node's `req.headers.cookie`; null when the request
   * has none): then `headers` is not searched for it.
   */
  readonly cookie?: string | null | undefined;
}

/**
 * Options of click capture, shared by every adapter. `R` is what the hooks receive: the framework's own
 * request (Express `req`, Koa `ctx`, Fetch `Request`), so a hook can read sessions or consent cookies.
 */
export interface CaptureOptions<R = CaptureRequest> {
  /** HMAC secrets, newest first: cookies are signed with the first and verified with any (rotation). Each at least {@link MIN_SECRET_LENGTH} characters. Required. */
  secrets: readonly string[];
  /** Query parameter name(s) that carry the click token; with several, the first listed that holds a valid token wins. @defaultValue {@link DEFAULT_CLICK_PARAM} */
  param?: string | readonly string[];
  /** @defaultValue {@link DEFAULT_TOKEN_MIN_LENGTH} */
  tokenMinLength?: number;
  /** @defaultValue {@link DEFAULT_TOKEN_MAX_LENGTH} */
  tokenMaxLength?: number;
  /** @defaultValue {@link DEFAULT_COOKIE_NAME} */
  cookieName?: string;
  /** `Domain` attribute (share the cookie with subdomains); host-only when absent. */
  cookieDomain?: string;
  /** `Secure` attribute; switch off only for `http://localhost`. @defaultValue true */
  secure?: boolean;
  /** @defaultValue {@link DEFAULT_ATTRIBUTION} */
  attribution?: Attribution;
  /** How long a click stays confirmable (cookie `Max-Age` is what is left of it). @defaultValue {@link DEFAULT_CONFIRM_WINDOW_MS} */
  confirmWindowMs?: number;
  /** Whether the cookie may be set on this request. Without consent the click still serves this request and the store. @defaultValue always allowed */
  consent?: (request: R) => boolean | Promise<boolean>;
  /** Server-side store of clicks, keyed by {@link CaptureOptions.key}; follows a shopper across devices. */
  store?: ClickStore;
  /** The visitor or customer id to keep the click under in `store`; null/undefined when unknown. Required with `store`. */
  key?: (request: R) => string | null | undefined | Promise<string | null | undefined>;
  /** Answer a landing GET/HEAD with a redirect to its path and query without the token (cookie set on the redirect); the Location is always a path on the shop's own origin (see `cleanUrlLocation`). @defaultValue false */
  cleanUrl?: boolean;
  /** @defaultValue {@link DEFAULT_CLEAN_URL_STATUS} */
  cleanUrlStatus?: 302 | 303;
  /** Told about every ignored token or cookie. Must not throw (a throw is swallowed). */
  onInvalid?: (event: InvalidClickEvent, request: R) => void;
  /** Told when `consent`, `key` or the store fail; capture carries on without them. @defaultValue logs the error's message with `console.error` */
  onError?: (error: unknown, request: R) => void;
  /** Clock in epoch milliseconds. @defaultValue `Date.now` */
  now?: () => number;
  /** HMAC-SHA256 implementation. @defaultValue plain JavaScript, synchronous ({@link jsHmac}); {@link webCryptoHmac} is the platform's. */
  hmac?: HmacSha256;
}

/** Options after validation, defaults filled in. */
export interface ResolvedCaptureOptions<R = CaptureRequest> {
  secrets: readonly string[];
  params: readonly string[];
  tokenMinLength: number;
  tokenMaxLength: number;
  cookieName: string;
  cookieDomain: string | undefined;
  secure: boolean;
  attribution: Attribution;
  confirmWindowMs: number;
  consent: ((request: R) => boolean | Promise<boolean>) | undefined;
  store: ClickStore | undefined;
  key: ((request: R) => string | null | undefined | Promise<string | null | undefined>) | undefined;
  cleanUrl: boolean;
  cleanUrlStatus: 302 | 303;
  onInvalid: ((event: InvalidClickEvent, request: R) => void) | undefined;
  onError: (error: unknown, request: R) => void;
  now: () => number;
  hmac: HmacSha256 | undefined;
}

/** One row of the schema. `check` returns a problem ("must be …") or null. */
interface OptionSpec {
  /** Type as shown in the README (in a code span; `|` escaped for the table). */
  type: string;
  /** Default as shown in the README ('—' for none, 'required'). */
  default: string;
  description: string;
  check(value: unknown): string | null;
}

const isInt = (v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): boolean =>
  Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;
const isFunction = (v: unknown): string | null => (typeof v === 'function' ? null : 'must be a function');
const isBoolean = (v: unknown): string | null => (typeof v === 'boolean' ? null : 'must be a boolean');
// Parameter names must be URL-safe as written, so `url.includes(name + '=')` is an exact pre-check.
const PARAM_NAME = /^[A-Za-z0-9._~-]{1,64}$/;
// RFC 6265 cookie-name: an RFC 7230 token.
const COOKIE_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const DOMAIN =
  /^\.?[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * The capture options schema: per option its README type, default, description and check.
 *
 * @example
 * ```ts
 * CAPTURE_OPTIONS_SCHEMA.param.default; // "`'click_token'` (`DEFAULT_CLICK_PARAM`)"
 * ```
 */
export const CAPTURE_OPTIONS_SCHEMA = {
  secrets: {
    type: 'string[]',
    default: 'required',
    description: `HMAC-SHA256 secrets, newest first: sign with the first, verify with any (rotation). Each ≥ ${MIN_SECRET_LENGTH} characters.`,
    check: (v) =>
      Array.isArray(v) &&
      v.length > 0 &&
      v.every((s) => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH)
        ? null
        : `must be a non-empty array of strings of at least ${MIN_SECRET_LENGTH} characters`,
  },
  param: {
    type: 'string \\| string[]',
    default: `\`'${DEFAULT_CLICK_PARAM}'\` (\`DEFAULT_CLICK_PARAM\`)`,
    description: 'Query parameter(s) carrying the click token; the first listed holding a valid token wins.',
    check: (v) => {
      const names = typeof v === 'string' ? [v] : v;
      return Array.isArray(names) &&
        names.length > 0 &&
        names.every((n) => typeof n === 'string' && PARAM_NAME.test(n))
        ? null
        : 'must be a name (or non-empty array of names) of 1-64 characters A-Z a-z 0-9 - . _ ~';
    },
  },
  tokenMinLength: {
    type: 'number',
    default: `${DEFAULT_TOKEN_MIN_LENGTH} (\`DEFAULT_TOKEN_MIN_LENGTH\`)`,
    description: 'Shortest token accepted. Tokens may use A-Z a-z 0-9 - . _ ~ (RFC 3986 unreserved).',
    check: (v) =>
      isInt(v, 1, MAX_CLICK_TOKEN_LENGTH) ? null : `must be an integer from 1 to ${MAX_CLICK_TOKEN_LENGTH}`,
  },
  tokenMaxLength: {
    type: 'number',
    default: `${DEFAULT_TOKEN_MAX_LENGTH} (\`DEFAULT_TOKEN_MAX_LENGTH\`)`,
    description: `Longest token accepted, at most ${MAX_CLICK_TOKEN_LENGTH} (what the outbox accepts).`,
    check: (v) =>
      isInt(v, 1, MAX_CLICK_TOKEN_LENGTH) ? null : `must be an integer from 1 to ${MAX_CLICK_TOKEN_LENGTH}`,
  },
  cookieName: {
    type: 'string',
    default: `\`'${DEFAULT_COOKIE_NAME}'\` (\`DEFAULT_COOKIE_NAME\`)`,
    description: 'Name of the signed cookie (use a `__Host-` prefix with `secure` and no `cookieDomain`).',
    check: (v) =>
      typeof v === 'string' && COOKIE_NAME.test(v)
        ? null
        : 'must be a cookie name (RFC 6265 token, 1-64 characters)',
  },
  cookieDomain: {
    type: 'string',
    default: '— (host-only)',
    description: '`Domain` attribute, to share the cookie with subdomains.',
    check: (v) =>
      typeof v === 'string' && v.length <= 253 && DOMAIN.test(v)
        ? null
        : 'must be a domain name such as example.com',
  },
  secure: {
    type: 'boolean',
    default: '`true`',
    description: '`Secure` attribute. Switch off only for plain `http://localhost`.',
    check: isBoolean,
  },
  attribution: {
    type: "'last' \\| 'first'",
    default: `\`'${DEFAULT_ATTRIBUTION}'\` (\`DEFAULT_ATTRIBUTION\`)`,
    description:
      '`last`: a new click (another token) replaces the kept one. `first`: a valid kept click stays. The same token seen again keeps its first time.',
    check: (v) => (v === 'last' || v === 'first' ? null : "must be 'last' or 'first'"),
  },
  confirmWindowMs: {
    type: 'number',
    default: `${DEFAULT_CONFIRM_WINDOW_MS} (\`DEFAULT_CONFIRM_WINDOW_MS\`, 7 days)`,
    description: 'How long a click stays confirmable; the cookie `Max-Age` is what is left of it.',
    check: (v) => (isInt(v, 1000) ? null : 'must be an integer of milliseconds, at least 1000'),
  },
  consent: {
    type: '(request) => boolean \\| Promise<boolean>',
    default: 'always allowed',
    description:
      'May the cookie be set on this request? Without consent the click still serves this request and the store.',
    check: isFunction,
  },
  store: {
    type: 'ClickStore',
    default: '—',
    description: 'Server-side store of clicks keyed by `key` (follows a shopper across devices).',
    check: (v) =>
      typeof v === 'object' &&
      v !== null &&
      ['put', 'get'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function')
        ? null
        : 'must be a ClickStore (an object with put and get)',
  },
  key: {
    type: '(request) => string \\| null \\| Promise<…>',
    default: '— (required with `store`)',
    description: 'Visitor or customer id the click is kept under in `store`; null when unknown.',
    check: isFunction,
  },
  cleanUrl: {
    type: 'boolean',
    default: '`false`',
    description:
      'Answer a landing GET/HEAD with a redirect to its path and query without the token, setting the cookie on it. The Location is always a path on the shop’s own origin.',
    check: isBoolean,
  },
  cleanUrlStatus: {
    type: '302 \\| 303',
    default: `\`${DEFAULT_CLEAN_URL_STATUS}\` (\`DEFAULT_CLEAN_URL_STATUS\`)`,
    description: 'Status of the clean-URL redirect.',
    check: (v) => (v === 302 || v === 303 ? null : 'must be 302 or 303'),
  },
  onInvalid: {
    type: '(event, request) => void',
    default: '—',
    description: 'Told about each ignored token or cookie (`{ source, reason, … }`); never gets a secret.',
    check: isFunction,
  },
  onError: {
    type: '(error, request) => void',
    default: '`console.error` of the message',
    description: 'Told when `consent`, `key` or the store fail; capture carries on without them.',
    check: isFunction,
  },
  now: {
    type: '() => number',
    default: '`Date.now`',
    description: 'Clock, epoch milliseconds (inject in tests).',
    check: isFunction,
  },
  hmac: {
    type: '(secret) => (data) => Uint8Array \\| Promise<Uint8Array>',
    default: '`jsHmac` (WebAssembly, or JavaScript where code cannot be compiled)',
    description:
      'The HMAC-SHA256 implementation (all give the same MAC, so cookies move between edge and Node).',
    check: isFunction,
  },
} as const satisfies { [K in keyof CaptureOptions]-?: OptionSpec };

function defaultOnError(error: unknown): void {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : 'non-error value thrown';
  console.error(`[postback] click capture carried on without a hook or store that failed: ${message}`);
}

/**
 * Validates options and fills in defaults. Unknown keys are refused (a typo would otherwise silently do
 * nothing). Errors name the option and never echo a value, so a secret cannot leak through them.
 *
 * @throws {OptionsError} whose `field` names the offending option.
 * @example
 * ```ts
 * const resolved = resolveCaptureOptions({ secrets: [process.env.POSTBACK_COOKIE_SECRET!] });
 * resolved.params; // ['click_token']
 * ```
 */
export function resolveCaptureOptions<R>(options: CaptureOptions<R>): ResolvedCaptureOptions<R> {
  if (typeof options !== 'object' || options === null) {
    throw new OptionsError('options', 'must be an object with at least `secrets`');
  }
  const specs: Record<string, OptionSpec> = CAPTURE_OPTIONS_SCHEMA;
  for (const [name, value] of Object.entries(options)) {
    const spec = specs[name];
    if (spec === undefined) {
      throw new OptionsError(name, 'unknown option');
    }
    if (value === undefined && name !== 'secrets') continue;
    const problem = spec.check(value);
    if (problem !== null) throw new OptionsError(name, problem);
  }
  if (options.secrets === undefined) {
    throw new OptionsError('secrets', CAPTURE_OPTIONS_SCHEMA.secrets.check(undefined) ?? 'is required');
  }
  const tokenMinLength = options.tokenMinLength ?? DEFAULT_TOKEN_MIN_LENGTH;
  const tokenMaxLength = options.tokenMaxLength ?? DEFAULT_TOKEN_MAX_LENGTH;
  if (tokenMinLength > tokenMaxLength) {
    throw new OptionsError('tokenMinLength', 'must not exceed tokenMaxLength');
  }
  if (options.store !== undefined && options.key === undefined) {
    throw new OptionsError('key', 'is required with `store` (which visitor is the click kept for?)');
  }
  const param = options.param ?? DEFAULT_CLICK_PARAM;
  return {
    secrets: [...options.secrets],
    params: typeof param === 'string' ? [param] : [...param],
    tokenMinLength,
    tokenMaxLength,
    cookieName: options.cookieName ?? DEFAULT_COOKIE_NAME,
    cookieDomain: options.cookieDomain,
    secure: options.secure ?? true,
    attribution: options.attribution ?? DEFAULT_ATTRIBUTION,
    confirmWindowMs: options.confirmWindowMs ?? DEFAULT_CONFIRM_WINDOW_MS,
    consent: options.consent,
    store: options.store,
    key: options.key,
    cleanUrl: options.cleanUrl ?? false,
    cleanUrlStatus: options.cleanUrlStatus ?? DEFAULT_CLEAN_URL_STATUS,
    onInvalid: options.onInvalid,
    onError: options.onError ?? defaultOnError,
    now: options.now ?? Date.now,
    hmac: options.hmac,
  };
}

/**
 * The options table in Markdown, rendered from {@link CAPTURE_OPTIONS_SCHEMA}: the READMEs of core and
 * every adapter hold this exact text (a test checks it), so defaults are written down in one place.
 *
 * @example
 * ```ts
 * console.log(renderCaptureOptionsTable());
 * ```
 */
export function renderCaptureOptionsTable(): string {
  const rows = Object.entries(CAPTURE_OPTIONS_SCHEMA).map(
    ([name, spec]) => `| \`${name}\` | \`${spec.type}\` | ${spec.default} | ${spec.description} |`,
  );
  return ['| option | type | default | what it does |', '|---|---|---|---|', ...rows].join('\n');
}

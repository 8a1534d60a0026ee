/**
 * Capture options: one zod schema ({@link CAPTURE_OPTIONS_SCHEMA}) holds their types, defaults,
 * validation and README documentation. The README option tables of core and every adapter are rendered
 * from it ({@link renderCaptureOptionsTable}) and tests keep them equal. The hooks are typed generically
 * over the framework's request by {@link CaptureHooks}; the schema checks that they are functions.
 */
import { z } from 'zod';
import type { ClickStore } from '../click.ts';
import { MAX_CLICK_TOKEN_LENGTH } from '../click.ts';
import { documented, renderOptionsTable } from '../options-table.ts';
import { parseOptions } from '../parse-options.ts';
import { DEFAULT_CONFIRM_WINDOW_MS } from '../policy.ts';
import type { HmacSha256 } from './hmac.ts';
import type { Attribution, CaptureHooks, CaptureRequest } from './hooks.ts';
import { DEFAULT_CLICK_PARAM, DEFAULT_TOKEN_MAX_LENGTH, DEFAULT_TOKEN_MIN_LENGTH } from './token.ts';

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

export type { Attribution, CaptureHooks, CaptureRequest, InvalidClickEvent } from './hooks.ts';

/** A value checked as a whole, so the error names the option (never an element) and echoes nothing. */
const whole = <T>(check: (v: unknown) => boolean, error: string) => z.custom<T>(check, { error });
const aFunction = <F>() => whole<F>((v) => typeof v === 'function', 'must be a function');
const intFrom = (min: number, max: number, error: string) =>
  z.int({ error }).min(min, { error }).max(max, { error });
const matching = (pattern: RegExp, error: string, max = 64) =>
  z.string({ error }).max(max, { error }).regex(pattern, { error });
const boolean = z.boolean({ error: 'must be a boolean' });

// Parameter names must be URL-safe as written, so `url.includes(name + '=')` is an exact pre-check.
const PARAM_NAME = /^[A-Za-z0-9._~-]{1,64}$/;
// RFC 6265 cookie-name: an RFC 7230 token.
const COOKIE_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const DOMAIN =
  /^\.?[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

const secretList = whole<readonly string[]>(
  (v) =>
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((s) => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH),
  `must be a non-empty array of strings of at least ${MIN_SECRET_LENGTH} characters`,
);
const paramNames = whole<string | readonly string[]>((v) => {
  const names = typeof v === 'string' ? [v] : v;
  return (
    Array.isArray(names) &&
    names.length > 0 &&
    names.every((n) => typeof n === 'string' && PARAM_NAME.test(n))
  );
}, 'must be a name (or non-empty array of names) of 1-64 characters A-Z a-z 0-9 - . _ ~');
const TOKEN_LENGTH_ERROR = `must be an integer from 1 to ${MAX_CLICK_TOKEN_LENGTH}`;
const tokenLength = intFrom(1, MAX_CLICK_TOKEN_LENGTH, TOKEN_LENGTH_ERROR);
const clickStore = whole<ClickStore>(
  (v) =>
    typeof v === 'object' &&
    v !== null &&
    ['put', 'get'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function'),
  'must be a ClickStore (an object with put and get)',
);

function defaultOnError(error: unknown): void {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : 'non-error value thrown';
  console.error(`[postback] click capture carried on without a hook or store that failed: ${message}`);
}

/**
 * The capture options schema. Unknown keys are refused (a typo would otherwise silently do nothing);
 * each option carries its README row (type, default, description) in a registry that
 * {@link renderCaptureOptionsTable} reads. The hooks' request type is `never` here:
 * {@link CaptureOptions} types them over the framework's request.
 *
 * @example
 * ```ts
 * CAPTURE_OPTIONS_SCHEMA.shape.cookieName.parse(undefined); // 'postback_click'
 * ```
 */
export const CAPTURE_OPTIONS_SCHEMA = z
  .strictObject(
    {
      /** HMAC secrets, newest first: sign with the first, verify with any (rotation). Each at least {@link MIN_SECRET_LENGTH} characters. */
      secrets: documented(
        secretList,
        'string[]',
        'required',
        `HMAC-SHA256 secrets, newest first: sign with the first, verify with any (rotation). Each ≥ ${MIN_SECRET_LENGTH} characters.`,
      ),
      /** Query parameter(s) carrying the click token; the first listed holding a valid token wins. @defaultValue {@link DEFAULT_CLICK_PARAM} */
      param: documented(
        paramNames.default(DEFAULT_CLICK_PARAM),
        'string \\| string[]',
        `\`'${DEFAULT_CLICK_PARAM}'\` (\`DEFAULT_CLICK_PARAM\`)`,
        'Query parameter(s) carrying the click token; the first listed holding a valid token wins.',
      ),
      /** @defaultValue {@link DEFAULT_TOKEN_MIN_LENGTH} */
      tokenMinLength: documented(
        tokenLength.default(DEFAULT_TOKEN_MIN_LENGTH),
        'number',
        `${DEFAULT_TOKEN_MIN_LENGTH} (\`DEFAULT_TOKEN_MIN_LENGTH\`)`,
        'Shortest token accepted. Tokens may use A-Z a-z 0-9 - . _ ~ (RFC 3986 unreserved).',
      ),
      /** @defaultValue {@link DEFAULT_TOKEN_MAX_LENGTH} */
      tokenMaxLength: documented(
        tokenLength.default(DEFAULT_TOKEN_MAX_LENGTH),
        'number',
        `${DEFAULT_TOKEN_MAX_LENGTH} (\`DEFAULT_TOKEN_MAX_LENGTH\`)`,
        `Longest token accepted, at most ${MAX_CLICK_TOKEN_LENGTH} (what the outbox accepts).`,
      ),
      /** @defaultValue {@link DEFAULT_COOKIE_NAME} */
      cookieName: documented(
        matching(COOKIE_NAME, 'must be a cookie name (RFC 6265 token, 1-64 characters)').default(
          DEFAULT_COOKIE_NAME,
        ),
        'string',
        `\`'${DEFAULT_COOKIE_NAME}'\` (\`DEFAULT_COOKIE_NAME\`)`,
        'Name of the signed cookie (use a `__Host-` prefix with `secure` and no `cookieDomain`).',
      ),
      /** `Domain` attribute (share the cookie with subdomains); host-only when absent. */
      cookieDomain: documented(
        matching(DOMAIN, 'must be a domain name such as example.com', 253).optional(),
        'string',
        '— (host-only)',
        '`Domain` attribute, to share the cookie with subdomains.',
      ),
      /** `Secure` attribute; switch off only for `http://localhost`. @defaultValue true */
      secure: documented(
        boolean.default(true),
        'boolean',
        '`true`',
        '`Secure` attribute. Switch off only for plain `http://localhost`.',
      ),
      /** @defaultValue {@link DEFAULT_ATTRIBUTION} */
      attribution: documented(
        z.enum(['last', 'first'], { error: "must be 'last' or 'first'" }).default(DEFAULT_ATTRIBUTION),
        "'last' \\| 'first'",
        `\`'${DEFAULT_ATTRIBUTION}'\` (\`DEFAULT_ATTRIBUTION\`)`,
        '`last`: a new click (another token) replaces the kept one. `first`: a valid kept click stays. The same token seen again keeps its first time.',
      ),
      /** How long a click stays confirmable (cookie `Max-Age` is what is left of it). @defaultValue {@link DEFAULT_CONFIRM_WINDOW_MS} */
      confirmWindowMs: documented(
        intFrom(1000, Number.MAX_SAFE_INTEGER, 'must be an integer of milliseconds, at least 1000').default(
          DEFAULT_CONFIRM_WINDOW_MS,
        ),
        'number',
        `${DEFAULT_CONFIRM_WINDOW_MS} (\`DEFAULT_CONFIRM_WINDOW_MS\`, 7 days)`,
        'How long a click stays confirmable; the cookie `Max-Age` is what is left of it.',
      ),
      consent: documented(
        aFunction<CaptureHooks<never>['consent']>().optional(),
        '(request) => boolean \\| Promise<boolean>',
        'always allowed',
        'May the click be kept and an order confirmed from it? Without consent: no cookie, nothing put in `store`, and `confirmOrder` enqueues nothing (reason `no-consent`); `click()` still shows it to this request only. Asked at a landing and by `confirmOrder`; a throw counts as no.',
      ),
      /** Server-side store of clicks, keyed by `key`; follows a shopper across devices. */
      store: documented(
        clickStore.optional(),
        'ClickStore',
        '—',
        'Server-side store of clicks keyed by `key` (follows a shopper across devices).',
      ),
      key: documented(
        aFunction<CaptureHooks<never>['key']>().optional(),
        '(request) => string \\| null \\| Promise<…>',
        '— (required with `store`)',
        'Visitor or customer id the click is kept under in `store`; null when unknown.',
      ),
      /** Redirect a landing GET/HEAD to its URL without the token (see `cleanUrlLocation`). @defaultValue false */
      cleanUrl: documented(
        boolean.default(false),
        'boolean',
        '`false`',
        'Answer a landing GET/HEAD with a redirect to its path and query without the token, setting the cookie on it. The Location is always a path on the shop’s own origin.',
      ),
      /** @defaultValue {@link DEFAULT_CLEAN_URL_STATUS} */
      cleanUrlStatus: documented(
        z.literal([302, 303], { error: 'must be 302 or 303' }).default(DEFAULT_CLEAN_URL_STATUS),
        '302 \\| 303',
        `\`${DEFAULT_CLEAN_URL_STATUS}\` (\`DEFAULT_CLEAN_URL_STATUS\`)`,
        'Status of the clean-URL redirect.',
      ),
      onInvalid: documented(
        aFunction<CaptureHooks<never>['onInvalid']>().optional(),
        '(event, request) => void',
        '—',
        'Told about each ignored token, cookie or stored click (`{ source, reason, … }`; `source` is `url`, `cookie` or `store`); never gets a secret.',
      ),
      onError: documented(
        aFunction<(error: unknown, request: never) => void>().default(() => defaultOnError),
        '(error, request) => void',
        '`console.error` of the message',
        'Told when `consent`, `key` or the store fail; capture carries on without them.',
      ),
      /** Clock in epoch milliseconds. @defaultValue `Date.now` */
      now: documented(
        aFunction<() => number>().default(() => Date.now),
        '() => number',
        '`Date.now`',
        'Clock, epoch milliseconds (inject in tests).',
      ),
      /** HMAC-SHA256 implementation. @defaultValue Web Crypto (`crypto.subtle`); the Node adapters pass `nodeCryptoHmac`. */
      hmac: documented(
        aFunction<HmacSha256>().optional(),
        '(key) => (data) => Uint8Array \\| Promise<Uint8Array>',
        'Web Crypto (`crypto.subtle`); the Node adapters pass `nodeCryptoHmac` (synchronous)',
        'The HMAC-SHA256 implementation, always the platform’s (all give the same MAC, so cookies move between edge and Node).',
      ),
    },
    { error: 'must be an object with at least `secrets`' },
  )
  .check(({ value, issues }) => {
    if (value.tokenMinLength > value.tokenMaxLength) {
      const message = 'must not exceed tokenMaxLength';
      issues.push({ code: 'custom', path: ['tokenMinLength'], input: value, message });
    }
    if (value.store !== undefined && value.key === undefined) {
      const message = 'is required with `store` (which visitor is the click kept for?)';
      issues.push({ code: 'custom', path: ['key'], input: value, message });
    }
  });

type HookName = keyof CaptureHooks<unknown>;

/**
 * Options of click capture, shared by every adapter: the schema's input, with the hooks typed over `R`.
 *
 * @example
 * ```ts
 * const options: CaptureOptions<Request> = { secrets: [process.env.POSTBACK_COOKIE_SECRET!], cleanUrl: true };
 * ```
 */
export type CaptureOptions<R = CaptureRequest> = Omit<z.input<typeof CAPTURE_OPTIONS_SCHEMA>, HookName> &
  CaptureHooks<R>;

type Parsed = z.output<typeof CAPTURE_OPTIONS_SCHEMA>;

/** Options after validation: defaults filled in, every option present (absent ones `undefined`), `param` as the list `params`. */
export type ResolvedCaptureOptions<R = CaptureRequest> = {
  [K in Exclude<keyof Required<Parsed>, HookName | 'param'>]: Parsed[K];
} & { [K in Exclude<HookName, 'onError'>]: CaptureHooks<R>[K] } & {
  params: readonly string[];
  onError: (error: unknown, request: R) => void;
};

/**
 * Validates options and fills in defaults, with the one options parser (`parseOptions`). Errors name the
 * option and never echo a value, so a secret cannot leak through them.
 *
 * @throws {OptionsError} whose `field` names the offending option.
 * @example
 * ```ts
 * const resolved = resolveCaptureOptions({ secrets: [process.env.POSTBACK_COOKIE_SECRET!] });
 * resolved.params; // ['click_token']
 * ```
 */
export function resolveCaptureOptions<R>(options: CaptureOptions<R>): ResolvedCaptureOptions<R> {
  const { param, secrets, ...rest } = parseOptions(CAPTURE_OPTIONS_SCHEMA, options);
  const params = typeof param === 'string' ? [param] : [...param];
  // The schema checked that the hooks are functions; their request type is the caller's `R`.
  return { ...rest, secrets: [...secrets], params } as unknown as ResolvedCaptureOptions<R>;
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
  return renderOptionsTable(CAPTURE_OPTIONS_SCHEMA.shape);
}

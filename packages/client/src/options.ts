/**
 * Options of `createClient`: one zod schema is the single source of truth for their types, defaults and
 * validation. Unknown keys are rejected so a misspelt option fails loudly instead of being ignored.
 */
import * as z from 'zod';
import { AdServiceError } from './errors.ts';
import { API_KEY_PATTERN, issuesOf } from './validate.ts';

/**
 * Milliseconds one attempt may take, from sending the request to the last byte of the response.
 * @defaultValue 10_000
 */
export const DEFAULT_TIMEOUT_MS = 10_000;
/**
 * `User-Agent` sent with every request.
 * @defaultValue 'postback-client/0.1.0'
 */
export const DEFAULT_USER_AGENT = 'postback-client/0.1.0';
/**
 * Extra attempts of an idempotent GET after a retryable failure. POSTs are never retried by the client.
 * @defaultValue 2
 */
export const DEFAULT_RETRIES = 2;
/**
 * First backoff delay of a GET retry; doubles each attempt, with full jitter.
 * @defaultValue 200
 */
export const DEFAULT_RETRY_MIN_DELAY_MS = 200;
/**
 * Longest wait before a GET retry. A `Retry-After` longer than this ends the retries and surfaces the error.
 * @defaultValue 5_000
 */
export const DEFAULT_RETRY_MAX_DELAY_MS = 5_000;
/**
 * Keep-alive connections per origin of the Node (undici) transport.
 * @defaultValue 64
 */
export const DEFAULT_CONNECTIONS = 64;

/**
 * Most bytes of an answer's body the client reads (1 MiB, far above any real answer of the service).
 * Past it the transport stops reading and cancels the body (closing its connection), and the answer
 * counts as an unexpected body: a 2xx is an `InvalidResponseError` with its status (applied, whatever its
 * body), any other status its usual error without the service's `detail`.
 * @defaultValue 1_048_576
 */
export const DEFAULT_MAX_ANSWER_BYTES = 1_048_576;
/**
 * Deepest nesting of arrays and objects the client parses in an answer (the service's answers nest two
 * or three levels). A deeper body is never handed to `JSON.parse` and counts as an unexpected body, like
 * one past {@link DEFAULT_MAX_ANSWER_BYTES}.
 * @defaultValue 64
 */
export const DEFAULT_MAX_ANSWER_DEPTH = 64;

/**
 * The options a client was given are invalid. `field` names the option, e.g. `retry.retries`.
 * The message never contains an option's value, so a bad `apiKey` is not echoed.
 *
 * @example
 * ```ts
 * try { createClient({ baseUrl, apiKey, timeoutMs: 5 } as never); }
 * catch (err) { if (err instanceof ClientOptionsError) console.error(err.field); } // "timeoutMs"
 * ```
 */
export class ClientOptionsError extends AdServiceError {
  override name = 'ClientOptionsError';
  /** Dotted path of the first bad option. */
  readonly field: string;
  constructor(field: string, message: string) {
    super('validation', `Invalid client option ${field}: ${message}`, { detail: message });
    this.field = field;
  }
}

/** A base URL path that already names the API version (`/v1`, `/api/v1/`): the client adds it itself. */
const V1_SUFFIX = /\/v1\/*$/i;

const positiveMs = z.int({ error: 'must be a positive integer of milliseconds' }).min(1).max(2_147_483_647);
const nonNegativeMs = z
  .int({ error: 'must be a non-negative integer of milliseconds' })
  .min(0)
  .max(2_147_483_647);

/**
 * Retry policy of idempotent GETs.
 *
 * @example
 * ```ts
 * createClient({ baseUrl, apiKey, retry: { retries: 3, minDelay: 100, maxDelay: 2_000 } });
 * ```
 */
export const retryOptionsSchema = z.strictObject({
  /** Extra attempts after the first. @defaultValue {@link DEFAULT_RETRIES} */
  retries: z.int({ error: 'must be an integer from 0 to 10' }).min(0).max(10).default(DEFAULT_RETRIES),
  /** @defaultValue {@link DEFAULT_RETRY_MIN_DELAY_MS} */
  minDelay: nonNegativeMs.default(DEFAULT_RETRY_MIN_DELAY_MS),
  /** @defaultValue {@link DEFAULT_RETRY_MAX_DELAY_MS} */
  maxDelay: nonNegativeMs.default(DEFAULT_RETRY_MAX_DELAY_MS),
});

/**
 * Schema of {@link ClientOptions}.
 *
 * @example
 * ```ts
 * const resolved = clientOptionsSchema.parse({ baseUrl: 'https://ads.example', apiKey: process.env.AD_KEY });
 * ```
 */
export const clientOptionsSchema = z.strictObject({
  /**
   * Origin (and optional path prefix) of the service; `/v1/...` is appended. A path ending in `/v1` is
   * refused: every request would go to `/v1/v1/...` and meet the service's router's 404.
   */
  baseUrl: z
    .url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' })
    .refine((url) => !URL.canParse(url) || !V1_SUFFIX.test(new URL(url).pathname), {
      error: 'must not end in /v1: the client adds /v1 to every path (give the URL without it)',
    }),
  /**
   * The API key, sent as `Authorization: Bearer <key>`. Kept private: never printed, logged or serialised.
   * Optional for a client that sends every request with its own key (`{ apiKey }` per call, e.g. a worker
   * for many advertiser accounts); a request with neither fails with a `ClientOptionsError` naming
   * `apiKey` before anything is sent.
   */
  apiKey: z
    .string({ error: 'must be a string' })
    .min(1, { error: 'must not be empty' })
    .regex(API_KEY_PATTERN, { error: 'must be printable ASCII without spaces' })
    .optional(),
  /** Per-attempt timeout in ms. @defaultValue {@link DEFAULT_TIMEOUT_MS} */
  timeout: positiveMs.default(DEFAULT_TIMEOUT_MS),
  /** A `fetch` to send requests with; when given it always wins over the built-in transport. */
  fetch: z
    .custom<typeof globalThis.fetch>((v) => typeof v === 'function', { error: 'must be a fetch function' })
    .optional(),
  /** @defaultValue {@link DEFAULT_USER_AGENT} */
  userAgent: z
    .string()
    .regex(/^[\x20-\x7e]+$/, { error: 'must be printable ASCII' })
    .default(DEFAULT_USER_AGENT),
  /** Retry of idempotent GETs, or `false` for none. */
  retry: z.union([z.literal(false), retryOptionsSchema]).default(() => retryOptionsSchema.parse({})),
  /** Keep-alive connections per origin (Node transport only). @defaultValue {@link DEFAULT_CONNECTIONS} */
  connections: z.int({ error: 'must be a positive integer' }).min(1).max(1024).default(DEFAULT_CONNECTIONS),
  /** Most bytes of an answer's body read; past it the body is cancelled. @defaultValue {@link DEFAULT_MAX_ANSWER_BYTES} */
  maxAnswerBytes: z
    .int({ error: 'must be a positive integer of bytes' })
    .min(1)
    .max(2 ** 30)
    .default(DEFAULT_MAX_ANSWER_BYTES),
  /** Deepest JSON nesting of an answer parsed. @defaultValue {@link DEFAULT_MAX_ANSWER_DEPTH} */
  maxAnswerDepth: z
    .int({ error: 'must be an integer from 1 to 1000' })
    .min(1)
    .max(1000)
    .default(DEFAULT_MAX_ANSWER_DEPTH),
  /** Random source in [0, 1) for backoff jitter; inject a fixed one in tests. @defaultValue Math.random */
  random: z.custom<() => number>((v) => typeof v === 'function', { error: 'must be a function' }).optional(),
});

/** Options of `createClient` as the caller writes them. */
export type ClientOptions = z.input<typeof clientOptionsSchema>;
/** Options after defaults are applied. */
export type ResolvedClientOptions = z.output<typeof clientOptionsSchema>;
/** Retry policy after defaults are applied (`retries: 0` when retries are off). */
export type RetryPolicy = z.output<typeof retryOptionsSchema>;

/**
 * Validates options and applies defaults.
 *
 * @throws ClientOptionsError naming the first bad option
 * @example
 * ```ts
 * const { timeout } = resolveClientOptions({ baseUrl: 'http://127.0.0.1:4010', apiKey: 'k' }); // 10_000
 * ```
 */
export function resolveClientOptions(options: ClientOptions): ResolvedClientOptions {
  // The client sits below core, so it cannot use core's parseOptions (and core importing the client's
  // root would load its transport): its options go through the client's one zod-issue converter, the
  // one that names bad request fields, and stay in its own error family.
  if (typeof options !== 'object' || options === null)
    throw new ClientOptionsError('options', 'must be an object');
  const result = clientOptionsSchema.safeParse(options);
  if (result.success) return result.data;
  const first = issuesOf(result.error)[0];
  throw new ClientOptionsError(first?.field ?? 'options', first?.message ?? 'invalid');
}

/**
 * Per-call options, the optional last argument of every method.
 *
 * @example
 * ```ts
 * await client.me.get({ signal: AbortSignal.timeout(2_000) });
 * await client.conversions.confirm(body, { timeout: 3_000 });
 * await client.conversions.confirm(body, { signal, apiKey: keyOf(account) }); // another account's key
 * ```
 */
export interface CallOptions {
  /** Aborts the call; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Per-attempt timeout in ms for this call, overriding the client's `timeout`. */
  timeout?: number;
  /**
   * The API key to send this request with (`Authorization: Bearer <apiKey>`) instead of the client's
   * own, e.g. the key of the advertiser account a job belongs to. Checked like the client's (a
   * `RequestValidationError` naming `apiKey`, without its value, when empty or holding whitespace or
   * control characters) and scrubbed, like the client's own, from everything the call throws — also
   * when the service echoes it back. Never stored on the client.
   */
  apiKey?: string;
  /**
   * Headers to add to this call, e.g. a trace context (`traceparent`, `tracestate`). Names are checked
   * (a `RequestValidationError` naming `headers`): none may replace a header the client sets
   * (`authorization`, `accept`, `user-agent`, `content-type`, …).
   */
  headers?: Record<string, string>;
  /** Called with the HTTP status of each answer that arrives (a 2xx's too, whose body is all a call returns). */
  onStatus?: (status: number) => void;
}

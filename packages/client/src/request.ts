/**
 * The one path every call takes: build the URL and headers, send through the transport under a per-attempt
 * timeout and the caller's signal, map failures to typed errors, retry idempotent GETs, and validate the
 * response body. The API key lives only inside the config closure handed in here (or the call's own
 * `apiKey`, for that call only), and every error built here gets a `redact` that knows the key the request
 * was sent with, so text echoed by the service never carries it.
 */
import type * as z from 'zod';
import { type ParsedAnswer, parseAnswerJson } from './answer-json.ts';
import {
  AdServiceError,
  ConnectionError,
  errorFromResponse,
  InvalidResponseError,
  RequestValidationError,
  TimeoutError,
  TransportUnavailableError,
} from './errors.ts';
import { type CallOptions, ClientOptionsError, type RetryPolicy } from './options.ts';
import { createRedactor } from './redact.ts';
import { parseRetryAfter } from './retry-after.ts';
import type { Transport, TransportResponse } from './transport/types.ts';
import { BodyReadError } from './transport/types.ts';
import { transportUnavailable } from './transport/unavailable.ts';
import { checkCallApiKey, checkCallHeaders, issuesOf } from './validate.ts';

/** One call to make: already validated; `path` starts with `/v1/`. */
export interface Endpoint<S extends z.ZodType> {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  response: S;
}

/** Everything the requester needs; built once per client. */
export interface RequesterConfig {
  baseUrl: URL;
  /** The client's own API key; undefined when every call must bring its own (`CallOptions.apiKey`). */
  apiKey: string | undefined;
  userAgent: string;
  timeout: number;
  retry: RetryPolicy | false;
  /** Most bytes of an answer's body read (see `DEFAULT_MAX_ANSWER_BYTES`). */
  maxAnswerBytes: number;
  /** Deepest JSON nesting of an answer parsed (see `DEFAULT_MAX_ANSWER_DEPTH`). */
  maxAnswerDepth: number;
  random: () => number;
  transport: Transport;
  /** Removes the client's API key from text entering an error (see `createRedactor`). */
  redact: (text: string) => string;
}

/** Sends one endpoint call and returns its validated response body. */
export type Requester = <S extends z.ZodType>(
  endpoint: Endpoint<S>,
  call?: CallOptions,
) => Promise<z.output<S>>;

const TIMED_OUT = Symbol('timed out');

/**
 * Builds the requester of a client.
 *
 * @example
 * ```ts
 * const send = createRequester(config);
 * const me = await send({ method: 'GET', path: '/v1/me', response: meSchema });
 * ```
 */
export function createRequester(config: RequesterConfig): Requester {
  const prefix = config.baseUrl.pathname.replace(/\/+$/, '');
  const baseHeaders: Record<string, string> = {
    ...(config.apiKey === undefined ? {} : { authorization: `Bearer ${config.apiKey}` }),
    accept: 'application/json',
    'user-agent': config.userAgent,
  };

  return async function send<S extends z.ZodType>(endpoint: Endpoint<S>, call: CallOptions = {}) {
    const url = new URL(`${prefix}${endpoint.path}`, config.baseUrl.origin);
    for (const [key, value] of Object.entries(endpoint.query ?? {})) url.searchParams.set(key, value);
    // Checked before anything else about the call, so that no error below can be built without its key.
    const callKey = call.apiKey === undefined ? undefined : checkCallApiKey(call.apiKey);
    if (callKey === undefined && config.apiKey === undefined) {
      throw new ClientOptionsError(
        'apiKey',
        'is required: give createClient an apiKey, or pass { apiKey } with each request',
      );
    }
    const redact = callKey === undefined ? config.redact : callRedactor(config.apiKey, callKey);
    const body = endpoint.body === undefined ? undefined : JSON.stringify(endpoint.body);
    const extra = call.headers === undefined ? {} : checkCallHeaders(call.headers);
    const headers: Record<string, string> = { ...extra, ...baseHeaders };
    if (callKey !== undefined) headers.authorization = `Bearer ${callKey}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    // Every error also runs its message through `redact`, so the call's key is removed there too.
    const what = config.redact(`${endpoint.method} ${endpoint.path}`);
    if (call.timeout !== undefined && !(Number.isSafeInteger(call.timeout) && call.timeout > 0)) {
      throw new RequestValidationError('timeout', 'must be a positive integer of milliseconds');
    }
    const timeout = call.timeout ?? config.timeout;
    // POSTs are never retried here: the durable queue owns their retries (order_id makes them idempotent).
    const retries = endpoint.method === 'GET' && config.retry !== false ? config.retry.retries : 0;

    for (let attempt = 0; ; attempt++) {
      call.signal?.throwIfAborted();
      let error: AdServiceError;
      try {
        const response = await attemptOnce(
          config.transport,
          {
            url,
            headers,
            body,
            what,
            timeout,
            method: endpoint.method,
            redact,
            maxBodyBytes: config.maxAnswerBytes,
          },
          call.signal,
        );
        call.onStatus?.(response.status);
        const parsed = readAnswer(response, config);
        if (response.status >= 200 && response.status < 300)
          return parseBody(endpoint.response, response, parsed, what, redact);
        // An error body we cannot read (oversized, too deep, not JSON) is no detail of the service's.
        error = errorFromResponse(response.status, parsed.ok ? parsed.value : null, response.retryAfter, {
          redact,
        });
      } catch (err) {
        if (!(err instanceof AdServiceError)) throw err;
        error = err;
      }
      if (!error.retryable || attempt >= retries || config.retry === false) throw error;
      const delay = backoff(config.retry, attempt, error.retryAfterMs, config.random);
      if (delay === null) throw error;
      await sleep(delay, call.signal);
    }
  };
}

/**
 * The redactor of a call sent with its own key: removes that key and the client's (longest first, so one
 * holding the other goes whole), and any `Bearer <token>`. Built on first use: a call that succeeds never
 * compiles it.
 */
function callRedactor(clientKey: string | undefined, callKey: string): (text: string) => string {
  let redact: ((text: string) => string) | undefined;
  return (text) => {
    redact ??= createRedactor(clientKey === undefined ? [callKey] : [clientKey, callKey]);
    return redact(text);
  };
}

interface Attempt {
  method: 'GET' | 'POST';
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
  what: string;
  timeout: number;
  redact: (text: string) => string;
  maxBodyBytes: number;
}

async function attemptOnce(
  transport: Transport,
  a: Attempt,
  callerSignal: AbortSignal | undefined,
): Promise<TransportResponse> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(TIMED_OUT), a.timeout);
  const onAbort = () => controller.abort(callerSignal?.reason);
  callerSignal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await transport.send({
      method: a.method,
      url: a.url,
      headers: a.headers,
      body: a.body,
      signal: controller.signal,
      maxBodyBytes: a.maxBodyBytes,
    });
  } catch (err) {
    if (callerSignal?.aborted) throw callerSignal.reason;
    if (controller.signal.reason === TIMED_OUT) {
      throw new TimeoutError('timeout', `${a.what}: no complete response within ${a.timeout} ms`, {
        retryable: true,
        detail: `timed out after ${a.timeout} ms`,
        redact: a.redact,
      });
    }
    if (err instanceof BodyReadError) {
      throw new ConnectionError(
        'connection',
        `${a.what}: the ${err.status} response was cut off before its end`,
        {
          // status stays null: no complete answer arrived, and a 2xx here must not read as one.
          retryable: true,
          detail: 'response body cut off',
          cause: err.cause,
          redact: a.redact,
        },
      );
    }
    // A transport that can never work here is a configuration error, not a connection to retry.
    const unavailable = transportUnavailable(err);
    if (unavailable !== null) {
      throw new TransportUnavailableError(`${a.what}: transport unavailable: ${unavailable.why}`, {
        detail: unavailable.why,
        maybeSent: unavailable.maybeSent,
        cause: unavailable.cause,
        redact: a.redact,
      });
    }
    const code = errorCode(err);
    throw new ConnectionError('connection', `${a.what}: connection failed${code ? ` (${code})` : ''}`, {
      retryable: true,
      detail: code ?? 'connection failed',
      cause: err,
      redact: a.redact,
    });
  } finally {
    clearTimeout(timer);
    callerSignal?.removeEventListener('abort', onAbort);
  }
}

/** An answer's body as JSON, or why it cannot be read: past the byte bound, nested too deeply, not JSON. */
function readAnswer(
  response: TransportResponse,
  bounds: { maxAnswerBytes: number; maxAnswerDepth: number },
): ParsedAnswer | { ok: false; why: 'oversized'; cause?: undefined } {
  if (response.oversized) return { ok: false, why: 'oversized' };
  return parseAnswerJson(response.body, bounds.maxAnswerDepth);
}

/** Why an answer's body could not be read, as the error says it (after `response body`). */
const UNREADABLE: Record<'oversized' | 'nested too deeply' | 'not JSON', string> = {
  oversized: 'is larger than maxAnswerBytes (not read past it)',
  'nested too deeply': 'nests deeper than maxAnswerDepth',
  'not JSON': 'is not valid JSON',
};

function parseBody<S extends z.ZodType>(
  schema: S,
  response: TransportResponse,
  parsed: ReturnType<typeof readAnswer>,
  what: string,
  redact: (text: string) => string,
): z.output<S> {
  const common = {
    status: response.status,
    retryAfterMs: parseRetryAfter(response.retryAfter),
    redact,
  };
  if (!parsed.ok) {
    // Not a body we can read: likely an intermediary's page or a corrupted or runaway body; sending again
    // may succeed. The parser's message quotes the body, so the cause goes through `redact` like any
    // service text.
    throw new InvalidResponseError(
      'invalid_response',
      `${what}: the ${response.status} response body ${UNREADABLE[parsed.why]}`,
      {
        ...common,
        detail: `response body ${UNREADABLE[parsed.why]}`,
        retryable: true,
        ...(parsed.cause === undefined ? {} : { cause: parsed.cause }),
      },
    );
  }
  const json = parsed.value;
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  // Valid JSON of the wrong shape is deterministic: the same request gets the same answer.
  const issues = issuesOf(result.error);
  const first = issues[0];
  const detail = first === undefined ? 'unexpected shape' : `${first.field}: ${first.message}`;
  throw new InvalidResponseError('invalid_response', `${what}: unexpected response shape: ${detail}`, {
    ...common,
    detail,
    retryable: false,
  });
}

/**
 * Milliseconds to wait before retry number `attempt + 1`: the service's `Retry-After` (the error's
 * `retryAfterMs`) when it sent one, else exponential backoff with full jitter. Null when `Retry-After`
 * asks for more than `maxDelay`.
 *
 * @example
 * ```ts
 * backoff({ retries: 2, minDelay: 200, maxDelay: 5_000 }, 0, err.retryAfterMs, Math.random);
 * ```
 */
export function backoff(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs: number | null,
  random: () => number,
): number | null {
  const asked = retryAfterMs;
  if (asked !== null) return asked <= policy.maxDelay ? asked : null;
  const ceiling = Math.min(policy.maxDelay, policy.minDelay * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e !== null && typeof e === 'object' && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

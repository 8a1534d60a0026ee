/**
 * `createClient`: a typed client for every `/v1` endpoint. The API key is held only in a closure — the
 * client object has no property that carries it, and it prints and serialises without it. A call may bring
 * its own key (`{ apiKey }`), which is used for that call only and never stored.
 */
import { createDefaultTransport } from '#transport';
import { type ClientOptions, resolveClientOptions } from './options.ts';
import { createRedactor } from './redact.ts';
import { createRequester } from './request.ts';
import { type AdServiceResources, createResources } from './resources.ts';
import { createFetchTransport } from './transport/fetch.ts';

/** What a client shows of its configuration: everything except the API key. */
export interface ClientDescription {
  baseUrl: string;
  timeout: number;
  userAgent: string;
  transport: string;
  retry: false | { retries: number; minDelay: number; maxDelay: number };
}

/**
 * A client of the ad service: one method per endpoint, grouped by resource, plus `close()`.
 *
 * @example
 * ```ts
 * const client = createClient({ baseUrl: 'https://ads.example', apiKey: process.env.AD_KEY! });
 * const { campaign_id } = await client.conversions.confirm({ click_token, order_id: 'ord_1', value_micros: toMicros('12.34') });
 * await client.close();
 * ```
 */
export interface AdServiceClient extends AdServiceResources {
  /** Where requests go: the base URL as given, without user info (never holds the key). */
  readonly baseUrl: string;
  /** Name of the transport in use: `undici` (Node default), `fetch` (edge default or injected). */
  readonly transport: string;
  /** Closes kept-alive connections (a later call opens new ones). */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
  /** The configuration without the API key. */
  toJSON(): ClientDescription;
  /**
   * Removes this client's API key (literal, percent-encoded or JSON-escaped) and any `Bearer <token>`
   * from a text: for logs and stored failure reasons. The client's own errors are already redacted, of a
   * per-request `apiKey` too; this function does not know per-request keys (use `createRedactor(key)`).
   *
   * @example
   * ```ts
   * outbox.fail(job, client.redact(String(err)));
   * ```
   */
  redact(text: string): string;
}

const inspectSymbol = Symbol.for('nodejs.util.inspect.custom');

/**
 * Creates a client. Options are validated (unknown keys rejected); an injected `fetch` always wins,
 * otherwise Node uses undici keep-alive pools and other runtimes use the global `fetch`.
 *
 * `apiKey` may be left out by a client whose every call passes its own (`{ apiKey }`, e.g. a worker
 * delivering for many advertiser accounts); a call with neither rejects with a `ClientOptionsError`
 * naming `apiKey`, before anything is sent.
 *
 * @throws ClientOptionsError naming the first bad option
 * @example
 * ```ts
 * const client = createClient({ baseUrl: 'http://127.0.0.1:4010', apiKey: 'pbsk_...', timeout: 5_000 });
 * const me = await client.me.get();
 * const shared = createClient({ baseUrl: 'http://127.0.0.1:4010' }); // keys per call only
 * await shared.conversions.confirm(body, { apiKey: keyOf(account) });
 * ```
 */
export function createClient(options: ClientOptions): AdServiceClient {
  const resolved = resolveClientOptions(options);
  const transport =
    resolved.fetch !== undefined
      ? createFetchTransport(resolved.fetch)
      : createDefaultTransport({ connections: resolved.connections });
  const baseUrl = new URL(resolved.baseUrl);
  const redact = createRedactor(resolved.apiKey ?? []);
  const send = createRequester({
    baseUrl,
    apiKey: resolved.apiKey,
    userAgent: resolved.userAgent,
    timeout: resolved.timeout,
    retry: resolved.retry,
    maxAnswerBytes: resolved.maxAnswerBytes,
    maxAnswerDepth: resolved.maxAnswerDepth,
    random: resolved.random ?? Math.random,
    transport,
    redact,
  });
  const description: ClientDescription = Object.freeze({
    baseUrl: baseUrl.href,
    timeout: resolved.timeout,
    userAgent: resolved.userAgent,
    transport: transport.name,
    retry: resolved.retry === false ? false : { ...resolved.retry },
  });
  const close = () => transport.close();
  const client: AdServiceClient = {
    ...createResources(send),
    baseUrl: withoutUserInfo(baseUrl),
    transport: transport.name,
    close,
    [Symbol.asyncDispose]: close,
    toJSON: () => description,
    redact,
  };
  Object.defineProperty(client, inspectSymbol, {
    enumerable: false,
    value: () => `AdServiceClient ${JSON.stringify(description)}`,
  });
  return client;
}

/** A URL's text without its user name and password. */
function withoutUserInfo(url: URL): string {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}

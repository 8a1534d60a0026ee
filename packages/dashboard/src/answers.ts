/**
 * How the dashboard answers: every response carries the same security headers (a strict
 * Content-Security-Policy, no sniffing, no referrer, no framing, no caching), JSON answers and problems
 * are built one way, and a {@link ClientError} is what a request's own fault throws (answered with its
 * 4xx status and logged as a client error, never as a store failure).
 */

/** The Content-Security-Policy of every answer: this origin's script and style only, nothing inline. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Headers of every answer, the page's and the API's alike. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
});

/**
 * What a request did wrong: answered with `status` (a 4xx) and `message` as `{ "error": message }`.
 * The message is ours, never the request's own text, so a log line cannot be forged through it.
 *
 * @example
 * ```ts
 * throw new ClientError(400, 'the job id is not a valid escape');
 * ```
 */
export class ClientError extends Error {
  override name = 'ClientError';
  /** The 4xx answered. */
  readonly status: number;
  /** Headers of the answer (`Allow`, `Retry-After`, `WWW-Authenticate`). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, message: string, headers: Readonly<Record<string, string>> = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

/** A response with the security headers, a content type when there is a body, and `extra` headers. */
export const answer = (
  body: BodyInit | null,
  status: number,
  type?: string,
  extra: Readonly<Record<string, string>> = {},
): Response =>
  new Response(body, {
    status,
    headers: { ...SECURITY_HEADERS, ...(type === undefined ? {} : { 'content-type': type }), ...extra },
  });

/** A JSON answer. */
export const json = (value: unknown, status = 200, extra: Readonly<Record<string, string>> = {}): Response =>
  answer(JSON.stringify(value), status, 'application/json; charset=utf-8', extra);

/** `{ "error": message }` with `status`. */
export const problem = (
  status: number,
  error: string,
  extra: Readonly<Record<string, string>> = {},
): Response => json({ error }, status, extra);

/** The answer to a {@link ClientError}. */
export const refusal = (error: ClientError): Response => problem(error.status, error.message, error.headers);

/**
 * The one error type handlers throw: an HTTP status with the `detail` sent to the caller as `{ detail }`.
 * Handlers never build error responses themselves, so every error body has the same shape.
 */

/**
 * A refusal with an HTTP status and a human-readable `detail`.
 *
 * @example
 * ```ts
 * throw new HttpProblem(422, 'click is older than 7 days');
 * ```
 */
export class HttpProblem extends Error {
  override name = 'HttpProblem';
  readonly status: number;
  readonly detail: string;
  /** Extra response headers (e.g. `Allow`, `WWW-Authenticate`). */
  readonly headers: Readonly<Record<string, string>>;
  constructor(status: number, detail: string, headers: Record<string, string> = {}) {
    super(detail);
    this.status = status;
    this.detail = detail;
    this.headers = headers;
  }
}

/** 400 for a body or query field that is missing or malformed; the detail starts with the field path. */
export function badField(field: string, message: string): HttpProblem {
  return new HttpProblem(400, `${field}: ${message}`);
}

/** 404 worded the same whether the object does not exist or belongs to another account. */
export function notFound(kind: string, id: string): HttpProblem {
  return new HttpProblem(404, `${kind} ${id} not found`);
}

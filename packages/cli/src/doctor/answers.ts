/**
 * The service's answers as {@link doctor} sees them: a `fetch` that notes, for every answer, when it was
 * asked and received on this host's clock and the service's `Date` header (for the clock check), and the
 * `GET /v1/me` of the base-URL check.
 */

/** One answer: this host's time around it and the service's `Date`, if it sent a readable one. */
export interface TimedAnswer {
  sentAt: number;
  receivedAt: number;
  status: number;
  /** The `Date` header as epoch milliseconds (whole seconds), or null when absent or unreadable. */
  date: number | null;
}

/**
 * A `fetch` that records each answer's times in `answers`; everything else is `inner`'s.
 *
 * @example
 * ```ts
 * const answers: TimedAnswer[] = [];
 * const client = createClient({ baseUrl, apiKey, fetch: recordingFetch(fetch, Date.now, answers) });
 * ```
 */
export function recordingFetch(
  inner: typeof globalThis.fetch,
  now: () => number,
  answers: TimedAnswer[],
): typeof globalThis.fetch {
  return async (input, init) => {
    const sentAt = now();
    const response = await inner(input, init);
    const receivedAt = now();
    const header = response.headers.get('date');
    const date = header === null ? Number.NaN : Date.parse(header);
    answers.push({ sentAt, receivedAt, status: response.status, date: Number.isFinite(date) ? date : null });
    return response;
  };
}

/** What `GET <base>/v1/me` got: its status, content type, the JSON `detail`, and whether the body is a JSON object. */
export interface MeAnswer {
  status: number;
  contentType: string;
  /** The body's `detail` when the body is JSON with a string `detail` (the service's error shape). */
  detail: string | null;
  /** The body is a JSON object (the shape of the service's answers). */
  object: boolean;
}

/** Most bytes of a body read: an answer to `/v1/me` is short; a page from a proxy need not be read whole. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * `GET <base>/v1/me`, without `Authorization` or with `apiKey`. Without a key the service answers 401
 * with its JSON `detail` (spec, "Authentication": a missing key gives 401; "Errors": the body is JSON
 * with `detail`), which costs nothing and sends no secret; but a router that authenticates before it
 * routes answers any path so. With the key, only the real path gets the service's answer (a JSON object,
 * or 401/403 with a JSON `detail`); a wrong one gets the router's 404.
 *
 * @example
 * ```ts
 * const { status, detail } = await askMe(fetch, 'https://ads.example', 10_000);
 * ```
 */
export async function askMe(
  send: typeof globalThis.fetch,
  baseUrl: string,
  timeoutMs: number,
  apiKey?: string,
): Promise<MeAnswer> {
  const base = new URL(baseUrl);
  const url = new URL(`${base.pathname.replace(/\/+$/, '')}/v1/me`, base.origin);
  const response = await send(url, {
    headers: {
      accept: 'application/json',
      ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }),
    },
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await readSome(response, MAX_BODY_BYTES);
  let detail: string | null = null;
  let object = false;
  try {
    const body: unknown = JSON.parse(text);
    object = body !== null && typeof body === 'object' && !Array.isArray(body);
    const value = (body as { detail?: unknown } | null)?.detail;
    if (typeof value === 'string') detail = value;
  } catch {
    // Not JSON (or cut at the bound): not the service's shape.
  }
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? 'none',
    detail,
    object,
  };
}

/** The first `maxBytes` of a body as text; the rest is cancelled, never read. */
async function readSome(response: Response, maxBytes: number): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < maxBytes) {
    const { value } = await reader.read();
    if (value === undefined) return new TextDecoder().decode(Buffer.concat(chunks));
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => {});
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, maxBytes));
}

/**
 * How far the service's clock is ahead of this host's (negative: behind), from the answer with the
 * shortest round trip, and how uncertain that is: a `Date` has whole seconds, and the answer was made
 * somewhere between sending and receiving. Null when no answer carried a `Date`.
 *
 * @example
 * ```ts
 * const skew = clockSkew(answers); // { skewMs: 7_200_000, uncertaintyMs: 520 }
 * ```
 */
export function clockSkew(answers: readonly TimedAnswer[]): { skewMs: number; uncertaintyMs: number } | null {
  let best: { skewMs: number; uncertaintyMs: number } | null = null;
  for (const answer of answers) {
    if (answer.date === null) continue;
    const halfTrip = Math.max(0, answer.receivedAt - answer.sentAt) / 2;
    // The service's time lies in [date, date + 1 s): take the middle, and half a second of doubt.
    const skewMs = Math.round(answer.date + 500 - (answer.sentAt + halfTrip));
    const uncertaintyMs = Math.ceil(500 + halfTrip);
    if (best === null || uncertaintyMs < best.uncertaintyMs) best = { skewMs, uncertaintyMs };
  }
  return best;
}

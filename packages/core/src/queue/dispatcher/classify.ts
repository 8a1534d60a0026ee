/**
 * Sorts what a send threw into the outcome classes the Dispatcher acts on, and turns it into a reason
 * string that is safe to store and emit. Retryability and the wait come from the client's error
 * (`retryable`, `retryAfterMs`: `AdServiceError` from `@postback/client`, or any error of that shape); the
 * status decides only what the client cannot know (a pause, a closed window, whether the request may have
 * been applied).
 */

import { escapeControls } from '../../escape-controls.ts';
import { DEFAULT_CONFIRM_WINDOW_MS, type EpochMs } from '../../policy.ts';
import type { Job } from '../job-types.ts';
import { CAMPAIGN_ID_PATTERN } from '../validation.ts';
import { type RequestValues, withoutRequestValues } from './answer-words.ts';

/**
 * - `applied`: a 2xx, whatever its body: the service applied the request.
 * - `auth`: 401/403 — not the job's fault: pause all delivery, do not burn the attempt.
 * - `misconfigured`: an answer that is not the service's (a 404 without the service's JSON `detail`: a
 *   wrong base URL path or a proxy), or a transport that cannot work in this runtime (the client's
 *   `transport_unavailable`: network access denied, the transport's API missing, an invalid dispatcher):
 *   pause all delivery and alert, as for `auth`; nothing is dead-lettered, and the reason names the cause.
 * - `window-closed`: a 4xx (not a 409) whose `detail`, the request's own values taken out
 *   (`withoutRequestValues`), says the job's window has closed (see `windowClosedPattern`): the job is
 *   `expired`, not `dead` (replaying it cannot help). Only on a reversal, or on a confirmation whose click
 *   is old enough for it to be plausible (see {@link EXPIRY_PLAUSIBLE_TOLERANCE_MS}).
 * - `held`: an answer of a status in `holdStatuses` (the 422 by default) whose `detail`, the request's own
 *   values taken out, says the campaign is not on s2s (see `campaignNotS2sPattern`): a problem of the
 *   campaign, not of the job, which the advertiser fixes in a minute. The job is held (`pending`, its
 *   attempt not counted) and probed again; `campaignId` is the campaign the detail names, if any.
 * - `rate-limited`: a 429 — the sender is too fast, not the job at fault: its key's scope pauses.
 * - `unmatched`: a 404 (with the service's `detail`) on a reversal whose campaign came from the service's
 *   own confirmation answer: the service has no such conversion, nothing to reverse.
 * - `transient`: what the client calls retryable (5xx, 408, timeouts, connection failures), and
 *   unknown errors — retry with backoff.
 * - `permanent`: any other 4xx (a reversal's 404 whose campaign a caller supplied names that campaign),
 *   a request we could not even build — dead-letter.
 */
export type FailureClass =
  | 'applied'
  | 'auth'
  | 'misconfigured'
  | 'window-closed'
  | 'held'
  | 'rate-limited'
  | 'unmatched'
  | 'transient'
  | 'permanent';

/** A classified failure. */
export interface Failure {
  class: FailureClass;
  /** Whether it looks like a network blip (no wait asked); the Dispatcher retries it like any transient failure. */
  blip: boolean;
  /** HTTP status, or null when no response arrived. */
  status: number | null;
  /** How long the service asked us to wait (`Retry-After`, any status), if it said. */
  retryAfterMs: number | null;
  /**
   * Whether the request may have reached the service and been applied although no clear answer says so
   * (a lost answer, a timeout after sending, a 5xx). False only for a clear refusal (a 4xx) or a request
   * that never left (refused before sending, connection refused, no such host).
   */
  maybeApplied: boolean;
  /** Safe description: status and the service's `detail`, no secret, no control character. */
  reason: string;
  /**
   * For `held`: the campaign the service's `detail` names (`cmp_…`, unchanged by every redaction), or
   * null when it names none. Absent for the other classes.
   */
  campaignId?: string | null;
  /**
   * True when the answer shows that no request of the job was ever applied, earlier ones included: a
   * confirmation answered 404 with the service's `detail` (the service does not know its click, and a
   * conversion needs one; a resend of an applied order is answered as a duplicate, not refused). The store
   * then clears its `maybeAppliedAt` (`FailResult.neverApplied`): its refund answers that nothing was
   * charged (`cancelled`) and sends nothing. Absent otherwise.
   */
  neverApplied?: boolean;
}

/** What {@link classifyFailure} needs besides the error. */
export interface ClassifyOptions {
  /** A 4xx `detail` matching this means the job's window has closed. */
  windowClosedPattern?: RegExp;
  /**
   * A 4xx `detail` matching this (and not `windowClosedPattern`) means the job's campaign is not on s2s:
   * class `held`. @defaultValue {@link DEFAULT_CAMPAIGN_NOT_S2S_PATTERN}
   */
  campaignNotS2sPattern?: RegExp;
  /** Removes secrets the caller knows of (the configured API key) from text, before any pattern. */
  redact?: (text: string) => string;
  /**
   * The statuses whose answer may hold a job (its campaign not on s2s).
   * @defaultValue {@link DEFAULT_HOLD_STATUSES}
   */
  holdStatuses?: readonly number[];
  /**
   * The job the request was for: its own values (order id, campaign, click token, value) are taken out of
   * the detail before any pattern, and its kind and click time decide whether a closed window is
   * plausible. Without it, the whole detail is read and any job may have expired.
   */
  job?: Job;
  /** The key the request was sent with, taken out of the detail like the job's values. */
  apiKey?: string;
  /** When the answer came (for the plausibility of a closed window). @defaultValue `Date.now()` */
  at?: EpochMs;
}

/**
 * The statuses whose answer may say a campaign is not on s2s (and hold its job): the sandbox's 422. The
 * spec does not show the service's status for it; a 409 (a conflict) never holds.
 * @defaultValue `[422]`
 */
export const DEFAULT_HOLD_STATUSES: readonly number[] = Object.freeze([422]);

/**
 * How much younger than the 7-day confirmation window (spec, limits) a confirmation's click may be when a
 * detail saying its window closed is believed: the service's clock and ours may differ, and its click time
 * is when it served the click, a little before our landing page stamped it. A younger click's "expired"
 * must be words of something else (a dead-letter, which reconcile shows).
 * @defaultValue `86_400_000` (1 day)
 */
export const EXPIRY_PLAUSIBLE_TOLERANCE_MS = 86_400_000;

/**
 * Whether a closed window is plausible for this job at `at`: always for a reversal (its window is not in
 * the spec), for a confirmation only once its click is at least the confirmation window less
 * {@link EXPIRY_PLAUSIBLE_TOLERANCE_MS} old.
 */
function expiryPlausible(job: Job | undefined, at: EpochMs): boolean {
  if (job === undefined || job.kind === 'refund') return true;
  return at - job.clickedAt >= DEFAULT_CONFIRM_WINDOW_MS - EXPIRY_PLAUSIBLE_TOLERANCE_MS;
}

/** The values a request for `job` carried, with the key it was sent with. */
function requestValuesOf(job: Job | undefined, apiKey: string | undefined): RequestValues {
  if (job === undefined) return { apiKey };
  return job.kind === 'confirm'
    ? { orderId: job.orderId, clickToken: job.clickToken, valueMicros: job.valueMicros, apiKey }
    : { orderId: job.orderId, campaignId: job.campaignId, apiKey };
}

/**
 * What a 404 with the service's `detail` on a reversal means. When its campaign came from the service's
 * own confirmation answer, the service has no such conversion: nothing to reverse (`unmatched`). When a
 * person or the app supplied it, the campaign may be a typo: `permanent`, naming the campaign tried, so
 * they can check it and refund again with the right one.
 */
function notFoundReversal(job: Job, reason: string): { class: 'unmatched' | 'permanent'; reason: string } {
  if (job.kind === 'refund' && job.campaignFrom === 'answer') {
    return { class: 'unmatched', reason: `the service has no such conversion to reverse: ${reason}` };
  }
  const campaign = job.kind === 'refund' ? job.campaignId : null;
  const source =
    job.kind === 'refund' && job.campaignFrom === 'caller'
      ? 'was supplied by the caller'
      : 'has no known source';
  return {
    class: 'permanent',
    reason: `campaign ${campaign ?? '(none)'} ${source}; check it and refund with the right campaignId: ${reason}`,
  };
}

/**
 * What a 4xx `detail` says when the confirmation or return window has closed. The spec does not show the
 * service's wording; this matches the usual phrasings ("older than 7 days", "window closed", "expired").
 * @defaultValue `/older than|window (?:is |has )?closed|expired|too (?:old|late)/i`
 */
export const DEFAULT_WINDOW_CLOSED_PATTERN =
  /older than|window (?:is |has )?closed|expired|too (?:old|late)/i;

/**
 * What a 4xx `detail` says when the job's campaign is not on s2s (its conversion source is the pixel):
 * the s2s endpoints apply only to s2s campaigns. The spec does not show the service's wording; this
 * matches the sandbox's ("campaign cmp_… is not on s2s: its conversion source is pixel …") and the usual
 * variants ("conversion source", "not set to s2s", "pixel").
 * @defaultValue `/conversion source|not (?:on |set to |using )?s2s|pixel/i`
 */
export const DEFAULT_CAMPAIGN_NOT_S2S_PATTERN = /conversion source|not (?:on |set to |using )?s2s|pixel/i;

const MAX_REASON = 500;

/** A campaign id anywhere in a text (checked whole against `CAMPAIGN_ID_PATTERN` afterwards). */
const CAMPAIGN_IN_TEXT = /\bcmp_[A-Za-z0-9_-]{1,250}/;

/**
 * Names and codes of a runtime refusing network access outright (Deno's `NotCapable`/`PermissionDenied`,
 * Node's permission model), for a client that lets them through as they are: nothing was sent, and no
 * retry can help.
 */
const DENIED = new Set(['NotCapable', 'PermissionDenied', 'ERR_ACCESS_DENIED']);

/** Error codes of a request that never reached any server: nothing can have been applied. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

/**
 * Removes anything shaped like a credential (`Bearer …`, `api_key=…`), in case a service or proxy echoes
 * a header back into an error body.
 *
 * @example
 * ```ts
 * redactSecrets('saw Authorization: Bearer pbsk_123'); // "saw Authorization: Bearer [redacted]"
 * ```
 */
export function redactSecrets(text: string): string {
  return text
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [redacted]')
    .replace(
      /\b(api[_-]?key|authorization|token)(["']?\s*[:=]\s*["']?)(?!(?:Bearer|Basic)\s)[^\s"',;}]+/gi,
      '$1$2[redacted]',
    );
}

/** A safe text cut to the length of a stored reason. */
const cut = (clean: string): string =>
  clean.length <= MAX_REASON ? clean : `${clean.slice(0, MAX_REASON - 1)}…`;

function safeReason(text: string, redact: ((text: string) => string) | undefined): string {
  return cut(escapeControls(redactSecrets(redact === undefined ? text : redact(text))));
}

/**
 * The campaign a detail names, or null: only an id of the form every campaign id has (`cmp_<id>`) that no
 * redaction changes (a service that echoes the API key there must not get it stored with the job).
 */
function campaignNamed(text: string, redact: ((text: string) => string) | undefined): string | null {
  const found = CAMPAIGN_IN_TEXT.exec(text)?.[0];
  if (found === undefined || !CAMPAIGN_ID_PATTERN.test(found)) return null;
  const redacted = redactSecrets(redact === undefined ? found : redact(found));
  return redacted === found ? found : null;
}

function field(err: unknown, name: string): unknown {
  return typeof err === 'object' && err !== null ? (err as Record<string, unknown>)[name] : undefined;
}

function statusOf(err: unknown): number | null {
  const status = field(err, 'status');
  return typeof status === 'number' && Number.isInteger(status) ? status : null;
}

function nameOf(err: unknown): string {
  return err instanceof Error || (typeof err === 'object' && err !== null && 'name' in err)
    ? String((err as { name: unknown }).name)
    : typeof err;
}

/** Whether the error, or one of its causes, says no connection was ever made. */
function neverSent(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    for (const key of ['code', 'detail', 'errno'] as const) {
      const value = field(e, key);
      if (typeof value === 'string' && NEVER_SENT.has(value)) return true;
    }
    e = field(e, 'cause');
  }
  return false;
}

/**
 * Classifies a send failure.
 *
 * @example
 * ```ts
 * classifyFailure(errorFromResponse(503, { detail: 'busy' })); // { class: 'transient', blip: true, status: 503, ... }
 * ```
 */
export function classifyFailure(err: unknown, options: ClassifyOptions = {}): Failure {
  const status = statusOf(err);
  const code = field(err, 'code');
  const message = err instanceof Error ? err.message : String(err);
  const fromClient = typeof field(err, 'retryable') === 'boolean' || status !== null;
  const reason = safeReason(fromClient ? message : `${nameOf(err)}: ${message}`, options.redact);
  const retryAfter = field(err, 'retryAfterMs');
  const retryAfterMs = typeof retryAfter === 'number' && retryAfter >= 0 ? retryAfter : null;
  const retryable = field(err, 'retryable');
  const failure = (cls: FailureClass, blip: boolean, maybeApplied: boolean): Failure => ({
    class: cls,
    blip: blip && retryAfterMs === null,
    status,
    retryAfterMs,
    maybeApplied,
    reason,
  });

  // A 2xx means applied, whatever its body says (even one we could not read).
  if (status !== null && status >= 200 && status < 300) return failure('applied', false, true);
  if (status === 401 || status === 403) return failure('auth', false, false);
  if (status === 404 && field(err, 'detailFromService') === false)
    return failure('misconfigured', false, false);
  // A 429 slows the sender: its scope pauses, whatever the job.
  if (status === 429) return failure('rate-limited', false, false);
  if (status !== null && status >= 400 && status < 500 && status !== 408) {
    const detail = field(err, 'detail');
    const text = typeof detail === 'string' ? detail : message;
    // What the service said, not what we sent: an order id "pixel-7" echoed back says nothing.
    const values = requestValuesOf(options.job, options.apiKey);
    const said = withoutRequestValues(text, values);
    const pattern = options.windowClosedPattern ?? DEFAULT_WINDOW_CLOSED_PATTERN;
    const at = options.at ?? Date.now();
    if (status !== 409 && expiryPlausible(options.job, at) && pattern.test(said))
      return failure('window-closed', false, false);
    const holdStatuses = options.holdStatuses ?? DEFAULT_HOLD_STATUSES;
    if (
      holdStatuses.includes(status) &&
      (options.campaignNotS2sPattern ?? DEFAULT_CAMPAIGN_NOT_S2S_PATTERN).test(said)
    ) {
      // The campaign named is the service's word; one we sent (a reversal's) is the job's campaign too.
      const named = withoutRequestValues(text, { ...values, campaignId: undefined });
      return { ...failure('held', false, false), campaignId: campaignNamed(named, options.redact) };
    }
    // The click is unknown to the service: no request of this order can have been applied.
    if (status === 404 && options.job?.kind === 'confirm')
      return { ...failure('permanent', false, false), neverApplied: true };
    if (status === 404 && options.job?.kind === 'refund') {
      const meaning = notFoundReversal(options.job, reason);
      return { ...failure(meaning.class, false, false), reason: cut(meaning.reason) };
    }
  }
  // No usable API key (none at all, or one the client refused to send: a stray newline from a keys
  // file): the key's fault, not the job's, so delivery pauses (the account's, with `apiKeyFor`).
  if (code === 'validation' && field(err, 'field') === 'apiKey') return failure('auth', false, false);
  // A request we refused to build never left.
  if (code === 'validation') return failure('permanent', false, false);
  // A transport that can never work here: a configuration error, not a connection to retry until the deadline.
  if (code === 'transport_unavailable')
    return failure('misconfigured', false, field(err, 'maybeSent') === true);
  if (DENIED.has(nameOf(err)) || (typeof code === 'string' && DENIED.has(code)))
    return failure('misconfigured', false, false);
  const sent = !neverSent(err);
  if (code === 'timeout' || code === 'connection') return failure('transient', true, sent);

  // An answer the service (or a gateway in front of it) may have given after applying the request.
  const unclear = status === null ? sent : status >= 500 || status === 408;
  if (typeof retryable === 'boolean') {
    // The client's word on whether sending again may help.
    return retryable ? failure('transient', true, unclear) : failure('permanent', false, unclear);
  }
  if (status === 408 || (status !== null && status >= 500)) return failure('transient', true, true);
  if (status !== null) return failure('permanent', false, false);
  const name = nameOf(err);
  if (
    name === 'AbortError' ||
    name === 'TimeoutError' ||
    (err instanceof TypeError && /fetch|network|socket/i.test(message))
  ) {
    return failure('transient', true, sent);
  }
  // Unknown: assume the world, not the job, is at fault — a wrong dead-letter loses a sale; a retry
  // costs only time, and the deadline bounds it. It may have reached the service.
  return failure('transient', false, true);
}

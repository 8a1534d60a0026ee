/**
 * Why delivery (or an account) is paused, as `status` names it from the workers' heart-beats: a refused
 * or missing key (`auth`), a 429 (`rate-limit`), a refusal that met every job (`systematic-refusal`), or
 * answers that are not the service's (`misconfigured`). A beat's pause carries its cause when the worker
 * that wrote it names one; else the cause follows from the pause's HTTP status (an account's pause keeps
 * it) or, for a pause of all delivery, from the status our own client put first in the reason
 * (`Ad service answered 429: ...`): the service's words come after it and are never read for a cause.
 */

/** A pause's cause, as `status` names it (`--json`: `cause`). */
export type PauseCauseName = 'auth' | 'rate-limit' | 'systematic-refusal' | 'misconfigured' | 'unknown';

/** The causes a worker may record, by the names its Dispatcher gives them. */
const RECORDED: Readonly<Record<string, PauseCauseName>> = {
  auth: 'auth',
  'rate-limited': 'rate-limit',
  'rate-limit': 'rate-limit',
  'systematic-refusal': 'systematic-refusal',
  misconfigured: 'misconfigured',
};

/** The status our client's error messages start with (`errorFromResponse`: `Ad service answered 429: …`). */
const CLIENT_STATUS = /^Ad service answered (\d{3}):/;

/** What a cause means, in the words of `status`'s lines. */
export const CAUSE_TEXT: Readonly<Record<PauseCauseName, string>> = {
  auth: 'auth: the key was refused or is missing',
  'rate-limit': 'rate limit: the service answered 429',
  'systematic-refusal': 'systematic refusal: the same refusal met every job',
  misconfigured: "misconfigured: the answers are not the service's (base URL, proxy)",
  unknown: 'cause not recorded',
};

/**
 * The cause of a pause: its recorded `cause` when it has one this version knows, else from its `status`
 * (null for an account: no key known), else from the status leading its `reason`.
 *
 * @example
 * ```ts
 * causeOfPause({ status: 429, reason: 'Ad service answered 429: slow down' }); // 'rate-limit'
 * causeOfPause({ reason: 'Ad service answered 401: invalid API key' });        // 'auth'
 * ```
 */
export function causeOfPause(pause: {
  cause?: unknown;
  status?: number | null;
  reason: string | null;
}): PauseCauseName {
  if (typeof pause.cause === 'string' && Object.hasOwn(RECORDED, pause.cause))
    return RECORDED[pause.cause] as PauseCauseName;
  let status = pause.status;
  if (status === undefined) {
    const leading = CLIENT_STATUS.exec(pause.reason ?? '')?.[1];
    if (leading === undefined) return 'unknown';
    status = Number(leading);
  }
  // An account paused without a status: the key resolver has no key for it.
  if (status === null || status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate-limit';
  if (status === 404) return 'misconfigured';
  if (status >= 400 && status < 500) return 'systematic-refusal';
  return 'unknown';
}

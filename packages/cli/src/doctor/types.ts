/** What {@link doctor} reports: one named check per thing that must hold for conversions to be paid. */

/** The checks, in the order they run and are shown. */
export const CHECK_NAMES = [
  'base-url',
  'key',
  'clock',
  'campaigns',
  'recent-answers',
  'outbox',
  'worker',
  'secret',
] as const;

/**
 * A check's name:
 * - `base-url`: the address answers like the service (a request without a key gets a 401 with a JSON `detail`),
 *   at the service's path (not ending in `/v1`; with the key, `/v1/me` is no router's 404);
 * - `key`: the key is accepted and has the `conversions` scope (extra scopes are a note);
 * - `clock`: this host's clock agrees with the service's `Date` within the safety margin;
 * - `campaigns`: no campaign of `GET /v1/campaigns` is on pixel billing (needs the `read` scope);
 * - `recent-answers`: no campaign named by the outbox's recent answers is on pixel billing;
 * - `outbox`: the outbox opens, is migrated and answers;
 * - `worker`: a worker beat recently and is not paused;
 * - `secret`: the cookie secret is long enough.
 */
export type CheckName = (typeof CHECK_NAMES)[number];

/** How a check came out; `skip`: not run (asked, or what it needs is missing), which is not a failure. */
export type CheckStatus = 'pass' | 'fail' | 'skip';

/** One check's result. Every text is free of the key and the secret. */
export interface DoctorCheck {
  name: CheckName;
  /** False only when the check failed. */
  ok: boolean;
  status: CheckStatus;
  /** What was found, one line. */
  detail: string;
  /** What to do about it, one line; null when nothing needs doing. */
  fix: string | null;
}

/** Every check's result, in {@link CHECK_NAMES} order. */
export interface DoctorReport {
  /** True when no check failed. */
  ok: boolean;
  checks: DoctorCheck[];
}

const result =
  (status: CheckStatus) =>
  (name: CheckName, detail: string, fix: string | null = null): DoctorCheck => ({
    name,
    ok: status !== 'fail',
    status,
    detail,
    fix,
  });

/** A passed check. */
export const pass = result('pass');
/** A failed check, with what to do. */
export const fail: (name: CheckName, detail: string, fix: string) => DoctorCheck = result('fail');
/** A check not run. */
export const skip = result('skip');

/**
 * Validation of what an app hands to an outbox (`ConfirmInput`, `RefundInput`). Every store calls these
 * (through the job factories in `jobs.ts`) before writing anything, so a malformed order never reaches a
 * store and the app gets one typed error naming the first bad field. What a click token and time may be is
 * `click.ts`'s to say; this module turns its rules into errors. {@link parseClickTime} is the one
 * parser of click times given as text (job files, command-line flags), checked against the calendar.
 */
import { CLICK_TOKEN_PATTERN, DEFAULT_MAX_CLOCK_SKEW_MS, MAX_CLICK_TOKEN_LENGTH } from '../click.ts';
import { PostbackError } from '../errors.ts';
import type { EpochMs } from '../policy.ts';
import type { ConfirmInput, RefundInput } from './outbox-types.ts';

/**
 * A confirm or refund request was rejected before anything was stored. `field` is the dotted path of
 * the offending field (`orderId`, `valueMicros`, `click.token`, `click.clickedAt`, `campaignId`).
 *
 * @example
 * ```ts
 * try { await outbox.confirm({ orderId: '', valueMicros: 1, click }); }
 * catch (err) { if (err instanceof JobValidationError) console.log(err.field); } // "orderId"
 * ```
 */
export class JobValidationError extends PostbackError {
  override name = 'JobValidationError';
  declare readonly code: 'job_validation';
  /** Dotted path of the offending field, e.g. `click.token`. */
  readonly field: string;

  constructor(field: string, message: string) {
    super('job_validation', `Invalid ${field}: ${message}`);
    this.field = field;
  }
}

/**
 * Longest order id accepted (the spec gives no bound; 255 fits every common order-id column).
 * @defaultValue 255
 */
export const MAX_ORDER_ID_LENGTH = 255;

/** Campaign ids have the form `cmp_<id>` (spec). */
export const CAMPAIGN_ID_PATTERN: RegExp = /^cmp_[A-Za-z0-9_-]{1,250}$/;

// C0 and C1 control characters, plus DEL: they break logs, CSV exports and some order systems.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/** Options of {@link validateConfirmInput}. */
export interface ValidateConfirmOptions {
  /** The current time, for the "not in the future" check. */
  now: EpochMs;
  /** @defaultValue {@link DEFAULT_MAX_CLOCK_SKEW_MS} */
  maxClockSkewMs?: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string')
    return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return String(value);
  return typeof value;
}

/**
 * Checks an order id: a non-empty string of at most {@link MAX_ORDER_ID_LENGTH} characters of well-formed
 * Unicode without control characters. It is the idempotency key at the service, so it is kept exactly (never trimmed).
 *
 * @example
 * ```ts
 * validateOrderId('ord_1042'); // "ord_1042"
 * ```
 */
export function validateOrderId(value: unknown, field = 'orderId'): string {
  return checkReference(value, field, MAX_ORDER_ID_LENGTH, 'must not be empty');
}

/**
 * A reference kept exactly as given: a string, not empty or only whitespace, bounded, well-formed Unicode,
 * no control characters. A lone surrogate (what cutting a name inside an emoji leaves) is refused: stores
 * write UTF-8, where every lone surrogate becomes U+FFFD, so two names that differ only there would be one.
 */
function checkReference(value: unknown, field: string, maxLength: number, whenEmpty: string): string {
  if (typeof value !== 'string')
    throw new JobValidationError(field, `must be a string, got ${describe(value)}`);
  if (value.length === 0) throw new JobValidationError(field, whenEmpty);
  if (value.trim().length === 0) throw new JobValidationError(field, 'must not be only whitespace');
  if (value.length > maxLength) {
    throw new JobValidationError(field, `must be at most ${maxLength} characters, got ${value.length}`);
  }
  if (!value.isWellFormed()) {
    throw new JobValidationError(
      field,
      'must be well-formed Unicode (it holds a lone surrogate, as a name cut inside an emoji does)',
    );
  }
  if (CONTROL_CHARS.test(value)) throw new JobValidationError(field, 'must not contain control characters');
  return value;
}

/** Longest account reference (characters). @defaultValue 200 */
export const MAX_ACCOUNT_LENGTH = 200;

/**
 * Checks an account reference: `undefined` and `null` mean "no account" (null); otherwise a non-empty
 * string of at most {@link MAX_ACCOUNT_LENGTH} characters of well-formed Unicode, not only whitespace,
 * without control characters.
 * Throws {@link JobValidationError} naming `field`.
 *
 * @example
 * ```ts
 * validateAccount('shop-17'); // "shop-17"
 * validateAccount(undefined); // null
 * ```
 */
export function validateAccount(value: unknown, field = 'account'): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new JobValidationError(field, `must be a string, got ${typeof value}`);
  return checkReference(value, field, MAX_ACCOUNT_LENGTH, 'must not be empty (leave it out for no account)');
}

/**
 * Checks a campaign id of the form `cmp_<id>`.
 *
 * @example
 * ```ts
 * validateCampaignId('cmp_8f3a'); // "cmp_8f3a"
 * ```
 */
export function validateCampaignId(value: unknown, field = 'campaignId'): string {
  if (typeof value !== 'string')
    throw new JobValidationError(field, `must be a string, got ${describe(value)}`);
  if (!CAMPAIGN_ID_PATTERN.test(value)) {
    throw new JobValidationError(
      field,
      `must have the form cmp_<id> (letters, digits, _ or -), got ${describe(value)}`,
    );
  }
  return value;
}

/**
 * Checks an amount of micros: a non-negative safe integer (never a float, never a string).
 *
 * @example
 * ```ts
 * validateMicros(12_340_000); // 12340000
 * ```
 */
export function validateMicros(value: unknown, field = 'valueMicros'): number {
  if (typeof value !== 'number') {
    const hint = typeof value === 'string' ? ' (convert decimal strings with toMicros)' : '';
    throw new JobValidationError(field, `must be an integer number of micros, got ${describe(value)}${hint}`);
  }
  if (!Number.isSafeInteger(value))
    throw new JobValidationError(field, `must be a safe integer of micros, got ${value}`);
  if (value < 0) throw new JobValidationError(field, `must not be negative, got ${value}`);
  return value;
}

/**
 * Checks a click token: 1–{@link MAX_CLICK_TOKEN_LENGTH} characters matching {@link CLICK_TOKEN_PATTERN}.
 *
 * @example
 * ```ts
 * validateClickToken('tok_4kQ9xZ'); // "tok_4kQ9xZ"
 * ```
 */
export function validateClickToken(value: unknown, field = 'click.token'): string {
  if (typeof value !== 'string')
    throw new JobValidationError(field, `must be a string, got ${describe(value)}`);
  if (value.length === 0) throw new JobValidationError(field, 'must not be empty');
  if (value.length > MAX_CLICK_TOKEN_LENGTH) {
    throw new JobValidationError(
      field,
      `must be at most ${MAX_CLICK_TOKEN_LENGTH} characters, got ${value.length}`,
    );
  }
  if (!CLICK_TOKEN_PATTERN.test(value)) {
    throw new JobValidationError(field, 'must contain only URL-safe characters (A-Z a-z 0-9 . _ ~ + / = -)');
  }
  return value;
}

/**
 * ISO 8601 / RFC 3339 date-time with an explicit zone: `YYYY-MM-DDTHH:MM[:SS[.fraction]]` then `Z` or
 * `±HH:MM`. A time without a zone would depend on the machine's time zone, so it is refused.
 */
const ISO_CLICK_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

/** Days in `month` (1-12) of `year`, by the Gregorian calendar. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Parses a click time given as text (a job file, a command-line flag, a JSON body) or as epoch
 * milliseconds. Text is an ISO 8601 date-time with a zone (`2026-01-02T03:04:05Z`,
 * `2026-01-02T04:04:05.123+01:00`); every part is checked against the calendar, so an impossible date
 * (`2026-02-30`, `2026-04-31`, `2025-02-29`) or time (`24:00`, `12:60`, a leap second `:60`, an offset
 * beyond `±23:59`) is refused instead of rolling over into the next month or day as `Date.parse` does.
 * Fractions of a second beyond milliseconds are truncated. Times before 1970 are refused (a click time
 * is non-negative epoch milliseconds).
 *
 * @param field named by the error (`click.clickedAt` by default; a CLI passes its own, e.g. `clicked_at`).
 * @returns epoch milliseconds.
 * @throws {JobValidationError} whose `field` is `field`, saying what is wrong.
 * @example
 * ```ts
 * parseClickTime('2026-01-02T03:04:05Z'); // 1767323045000
 * parseClickTime('2026-02-30T00:00:00Z', 'clicked_at'); // throws: Invalid clicked_at: … February 2026 has 28 days
 * ```
 */
export function parseClickTime(value: unknown, field = 'click.clickedAt'): EpochMs {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value >= 0) return value;
    throw new JobValidationError(field, `must be a non-negative integer of epoch milliseconds, got ${value}`);
  }
  if (typeof value !== 'string') {
    throw new JobValidationError(
      field,
      `must be an ISO 8601 time with a zone or epoch milliseconds, got ${describe(value)}`,
    );
  }
  const m = ISO_CLICK_TIME.exec(value);
  if (m === null) {
    throw new JobValidationError(
      field,
      `must be an ISO 8601 time with a zone, such as 2026-01-02T03:04:05Z, got ${describe(value)}`,
    );
  }
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millis = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  const offsetSign = m[8] === '-' ? -1 : 1;
  const offsetHours = m[9] === undefined ? 0 : Number(m[9]);
  const offsetMinutes = m[10] === undefined ? 0 : Number(m[10]);
  if (month < 1 || month > 12) {
    throw new JobValidationError(field, `has no month ${m[2]} (months are 01 to 12): ${describe(value)}`);
  }
  const days = daysInMonth(year, month);
  if (day < 1 || day > days) {
    throw new JobValidationError(
      field,
      `is not a date: ${MONTHS[month - 1]} ${year} has ${days} days, got day ${m[3]} in ${describe(value)}`,
    );
  }
  if (hour > 23) throw new JobValidationError(field, `has hour ${m[4]} (00 to 23): ${describe(value)}`);
  if (minute > 59) throw new JobValidationError(field, `has minute ${m[5]} (00 to 59): ${describe(value)}`);
  if (second > 59) throw new JobValidationError(field, `has second ${m[6]} (00 to 59): ${describe(value)}`);
  if (offsetHours > 23 || offsetMinutes > 59) {
    throw new JobValidationError(field, `has a zone offset beyond ±23:59: ${describe(value)}`);
  }
  const ms =
    Date.UTC(year, month - 1, day, hour, minute, second, millis) -
    offsetSign * (offsetHours * 60 + offsetMinutes) * 60_000;
  if (ms < 0) {
    throw new JobValidationError(field, `lies before 1970-01-01T00:00:00Z: ${describe(value)}`);
  }
  return ms;
}

/**
 * Validates a confirmation request and returns a clean copy holding only the known fields.
 * Throws {@link JobValidationError} naming the first bad field.
 *
 * @example
 * ```ts
 * const input = validateConfirmInput(
 *   { orderId: 'ord_1', valueMicros: 12_340_000, click: { token: 'tok_abc', clickedAt: Date.now() } },
 *   { now: Date.now() },
 * );
 * ```
 */
export function validateConfirmInput(input: unknown, options: ValidateConfirmOptions): ConfirmInput {
  if (!isRecord(input)) throw new JobValidationError('input', `must be an object, got ${describe(input)}`);
  const orderId = validateOrderId(input.orderId);
  const valueMicros = validateMicros(input.valueMicros);
  const click = input.click;
  if (!isRecord(click))
    throw new JobValidationError('click', `must be an object { token, clickedAt }, got ${describe(click)}`);
  const token = validateClickToken(click.token);
  const clickedAt = click.clickedAt;
  if (typeof clickedAt !== 'number' || !Number.isFinite(clickedAt)) {
    throw new JobValidationError(
      'click.clickedAt',
      `must be a finite number of epoch milliseconds, got ${describe(clickedAt)}`,
    );
  }
  if (!Number.isSafeInteger(clickedAt) || clickedAt < 0) {
    throw new JobValidationError(
      'click.clickedAt',
      `must be a non-negative integer of epoch milliseconds, got ${clickedAt}`,
    );
  }
  const skew = options.maxClockSkewMs ?? DEFAULT_MAX_CLOCK_SKEW_MS;
  if (clickedAt > options.now + skew) {
    throw new JobValidationError(
      'click.clickedAt',
      `lies ${clickedAt - options.now} ms in the future (more than the allowed clock skew of ${skew} ms)`,
    );
  }
  const account = validateAccount(input.account);
  return { orderId, valueMicros, click: { token, clickedAt }, ...(account === null ? {} : { account }) };
}

/**
 * Validates a reversal request and returns a clean copy. `campaignId` stays optional here: whether it is
 * required depends on what the outbox knows of the confirmation (see `planRefund`).
 *
 * @example
 * ```ts
 * validateRefundInput({ orderId: 'ord_1', campaignId: 'cmp_42' });
 * ```
 */
export function validateRefundInput(input: unknown): RefundInput {
  if (!isRecord(input)) throw new JobValidationError('input', `must be an object, got ${describe(input)}`);
  const orderId = validateOrderId(input.orderId);
  const account = validateAccount(input.account);
  return {
    orderId,
    ...(account === null ? {} : { account }),
    ...(input.campaignId === undefined || input.campaignId === null
      ? {}
      : { campaignId: validateCampaignId(input.campaignId) }),
  };
}

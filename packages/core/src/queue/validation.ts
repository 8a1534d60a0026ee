/**
 * Validation of what an app hands to an outbox (`ConfirmInput`, `RefundInput`). Every store calls these
 * (through the job factories in `jobs.ts`) before writing anything, so a malformed order never reaches a
 * store and the app gets one typed error naming the first bad field.
 */
import { PostbackError } from '../errors.ts';
import type { EpochMs } from '../policy.ts';
import type { ConfirmInput, RefundInput } from './types.ts';

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

/**
 * Longest click token accepted. The spec gives no bound; tokens we have seen are 24–48 characters, and a
 * cap keeps a hostile landing URL from filling the queue.
 * @defaultValue 512
 */
export const MAX_CLICK_TOKEN_LENGTH = 512;

/**
 * How far in the future a click's `clickedAt` may lie (clock skew between the capturing server and the
 * one enqueueing). Kept well below the deadline's safety margin so skew can never push a send past the
 * service's window.
 * @defaultValue 300_000 (5 minutes)
 */
export const DEFAULT_MAX_CLOCK_SKEW_MS = 300_000;

/**
 * Characters a click token may hold: RFC 3986 unreserved characters plus `+ / =` (base64). Anything else
 * (spaces, quotes, `<`, control characters, non-ASCII) is not something the service issued.
 */
export const CLICK_TOKEN_PATTERN: RegExp = /^[A-Za-z0-9._~+/=-]+$/;

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
 * Checks an order id: a non-empty string of at most {@link MAX_ORDER_ID_LENGTH} characters without
 * control characters. It is the idempotency key at the service, so it is kept exactly (never trimmed).
 *
 * @example
 * ```ts
 * validateOrderId('ord_1042'); // "ord_1042"
 * ```
 */
export function validateOrderId(value: unknown, field = 'orderId'): string {
  if (typeof value !== 'string')
    throw new JobValidationError(field, `must be a string, got ${describe(value)}`);
  if (value.length === 0) throw new JobValidationError(field, 'must not be empty');
  if (value.trim().length === 0) throw new JobValidationError(field, 'must not be only whitespace');
  if (value.length > MAX_ORDER_ID_LENGTH) {
    throw new JobValidationError(
      field,
      `must be at most ${MAX_ORDER_ID_LENGTH} characters, got ${value.length}`,
    );
  }
  if (CONTROL_CHARS.test(value)) throw new JobValidationError(field, 'must not contain control characters');
  return value;
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
  return { orderId, valueMicros, click: { token, clickedAt } };
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
  if (input.campaignId === undefined || input.campaignId === null) return { orderId };
  return { orderId, campaignId: validateCampaignId(input.campaignId) };
}

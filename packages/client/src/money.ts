/**
 * Money as integer micros (1 unit of currency = 1,000,000 micros). The service never accepts a float, so
 * amounts are converted from decimal strings exactly, digit by digit, and never through floating point.
 * `Micros` is currency-free: the service's account decides the currency, not this type.
 */
import { RequestValidationError } from './errors.ts';

declare const microsBrand: unique symbol;

/**
 * A non-negative safe integer number of micros. Branded so a plain `number` (which may be a float or a
 * unit amount) does not pass for one by accident; make one with {@link toMicros} or {@link assertMicros}.
 *
 * @example
 * ```ts
 * const price: Micros = toMicros('12.34'); // 12_340_000
 * ```
 */
export type Micros = number & { readonly [microsBrand]: 'Micros' };

/** Micros in one unit of currency. */
export const MICROS_PER_UNIT = 1_000_000;

/** Most decimal places a money string may carry: micros are the smallest unit. */
export const MICROS_DECIMALS = 6;

/**
 * A money value that is not an exact non-negative integer of micros (a float, a negative number, a
 * decimal string with more than six decimals, or too large to be a safe integer).
 *
 * @example
 * ```ts
 * try { toMicros('1.2345678', 'value'); } catch (err) { if (err instanceof MicrosError) console.log(err.field); }
 * ```
 */
export class MicrosError extends RequestValidationError {
  override name = 'MicrosError';
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Whether `value` is a non-negative safe integer, i.e. a valid amount of micros.
 *
 * @example
 * ```ts
 * isMicros(1_500_000); // true
 * isMicros(1.5);       // false
 * ```
 */
export function isMicros(value: unknown): value is Micros {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Asserts that `value` is a valid amount of micros, naming `field` in the error otherwise.
 *
 * @param field - dotted path reported in the {@link MicrosError}
 * @throws MicrosError when `value` is not a non-negative safe integer
 * @example
 * ```ts
 * assertMicros(order.totalMicros, 'value_micros');
 * ```
 */
export function assertMicros(value: unknown, field = 'value'): asserts value is Micros {
  if (!isMicros(value)) {
    throw new MicrosError(field, `must be a non-negative safe integer of micros, got ${describe(value)}`);
  }
}

/**
 * Returns `value` as {@link Micros} after checking it.
 *
 * @throws MicrosError when `value` is not a non-negative safe integer
 * @example
 * ```ts
 * const bid = micros(500_000);
 * ```
 */
export function micros(value: number, field = 'value'): Micros {
  assertMicros(value, field);
  return value;
}

/**
 * Converts a decimal amount string (`"12.34"`, `"0.000001"`, `"100"`) to micros exactly.
 * At most six decimals; no sign, exponent, grouping or whitespace.
 *
 * @param field - dotted path reported in the error when the string is rejected
 * @throws MicrosError on any other input, or when the result is not a safe integer
 * @example
 * ```ts
 * toMicros('12.34'); // 12_340_000
 * ```
 */
export function toMicros(amount: string, field = 'amount'): Micros {
  if (typeof amount !== 'string')
    throw new MicrosError(field, `must be a decimal string, got ${describe(amount)}`);
  const match = DECIMAL.exec(amount);
  if (match === null)
    throw new MicrosError(field, `must be a decimal string like "12.34", got ${JSON.stringify(amount)}`);
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  if (fraction.length > MICROS_DECIMALS) {
    throw new MicrosError(field, `has more than ${MICROS_DECIMALS} decimals: ${JSON.stringify(amount)}`);
  }
  const total = BigInt(whole) * BigInt(MICROS_PER_UNIT) + BigInt(fraction.padEnd(MICROS_DECIMALS, '0'));
  if (total > MAX_SAFE)
    throw new MicrosError(field, `is too large to be a safe integer of micros: ${amount}`);
  return Number(total) as Micros;
}

/** Options of {@link formatMicros}. */
export interface FormatMicrosOptions {
  /** Always print all six decimals (`"12.340000"`) instead of trimming to at least two. @defaultValue false */
  fixed?: boolean;
}

/**
 * Formats micros as a decimal string, exactly. Trailing zeros are trimmed down to two decimals
 * (`"12.34"`, `"12.00"`, `"0.000001"`), or all six decimals are kept with `{ fixed: true }`.
 * `toMicros(formatMicros(m)) === m` for every valid `m`.
 *
 * @throws MicrosError when `value` is not a non-negative safe integer
 * @example
 * ```ts
 * formatMicros(12_340_000);                  // "12.34"
 * formatMicros(12_340_000, { fixed: true }); // "12.340000"
 * ```
 */
export function formatMicros(value: number, options: FormatMicrosOptions = {}): string {
  assertMicros(value, 'value');
  // Remainder first: `Math.floor(value / 1e6)` rounds up near 2^53, where the quotient's ulp exceeds 1e-6.
  const rest = value % MICROS_PER_UNIT;
  const whole = (value - rest) / MICROS_PER_UNIT;
  const fraction = String(rest).padStart(MICROS_DECIMALS, '0');
  const shown = options.fixed === true ? fraction : fraction.replace(/0+$/, '').padEnd(2, '0');
  return `${whole}.${shown}`;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return String(value);
  return value === null ? 'null' : typeof value;
}

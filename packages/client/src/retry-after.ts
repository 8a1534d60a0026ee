/**
 * The `Retry-After` header (RFC 9110 §10.2.3) as a wait in milliseconds: delta-seconds, or an HTTP date in
 * any of its three forms (IMF-fixdate, obsolete RFC 850, asctime). Anything else is no advice at all
 * (null), never a guess: `Date.parse` would read `"1.5"` as a date in 2001. Imports nothing.
 */

/**
 * Longest wait a `Retry-After` can ask for, in ms (one year): a larger delta is clamped to it, so the
 * value stays a safe integer that timers and arithmetic handle. Deadlines cap every wait well before it.
 * @defaultValue 31_536_000_000
 */
export const MAX_RETRY_AFTER_MS = 365 * 24 * 3600 * 1000;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY = '(?:mon|tue|wed|thu|fri|sat|sun)';
const LONG_DAY = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
const MONTH = '(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
/** `Sun, 06 Nov 1994 08:49:37 GMT` → day, month, year, h, m, s. */
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`, 'i');
/** `Sunday, 06-Nov-94 08:49:37 GMT` → day, month, 2-digit year, h, m, s. */
const RFC_850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`, 'i');
/** `Sun Nov  6 08:49:37 1994` → month, day, h, m, s, year. */
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`, 'i');

function utc(year: number, month: string, day: string, h: string, m: string, s: string): number | null {
  const monthIndex = MONTHS.indexOf(month.toLowerCase());
  const [d, hh, mm, ss] = [Number(day), Number(h), Number(m), Number(s)];
  const at = Date.UTC(year, monthIndex, d, hh, mm, ss);
  const date = new Date(at);
  // Date.UTC rolls 31 Feb over into March: an impossible date is no date.
  if (date.getUTCMonth() !== monthIndex || date.getUTCDate() !== d || hh > 23 || mm > 59 || ss > 60) {
    return null;
  }
  return at;
}

/** The instant an HTTP date names, in epoch ms, or null when `text` is not one. */
function httpDate(text: string, now: number): number | null {
  let m = IMF_FIXDATE.exec(text);
  if (m)
    return utc(Number(m[3]), m[2] as string, m[1] as string, m[4] as string, m[5] as string, m[6] as string);
  m = RFC_850.exec(text);
  if (m) {
    // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
    const currentYear = new Date(now).getUTCFullYear();
    let year = Math.floor(currentYear / 100) * 100 + Number(m[3]);
    if (year > currentYear + 50) year -= 100;
    return utc(year, m[2] as string, m[1] as string, m[4] as string, m[5] as string, m[6] as string);
  }
  m = ASCTIME.exec(text);
  if (m) {
    return utc(
      Number(m[6]),
      m[1] as string,
      (m[2] as string).trim(),
      m[3] as string,
      m[4] as string,
      m[5] as string,
    );
  }
  return null;
}

/**
 * Parses a `Retry-After` header into milliseconds from `now`: delta-seconds (`"120"`) or an HTTP date
 * (`"Sun, 06 Nov 1994 08:49:37 GMT"`; a date in the past is 0). Null when the header is absent or is
 * neither; clamped to {@link MAX_RETRY_AFTER_MS}.
 *
 * @param value - the raw header value
 * @param now - the current time in epoch ms @defaultValue Date.now()
 * @example
 * ```ts
 * parseRetryAfter('7'); // 7000
 * parseRetryAfter('Wed, 21 Oct 2026 07:28:00 GMT', Date.parse('2026-10-21T07:27:00Z')); // 60000
 * ```
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  const at = httpDate(text, now);
  if (at === null) return null;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

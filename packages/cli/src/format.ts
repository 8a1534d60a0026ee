/**
 * How jobs and times are shown by the queue commands: one stable JSON shape per job (`--json`) and
 * short human-readable text otherwise. Times in JSON are ISO 8601 UTC strings; in text, ISO plus a
 * relative "in 3h"/"5m ago".
 *
 * Whatever a command prints comes partly from outside: the service's `detail` in a reason, an order id,
 * a file's line, a flag's value. Text output passes every such field through {@link printable} (most
 * simply with the {@link text} template tag), so a newline cannot forge a row and an escape sequence
 * cannot reach the terminal; JSON output goes through {@link jsonText}, still JSON that parses to the
 * same values.
 */
import type { AttemptRecord, Job } from '@postback/core';

/**
 * What a text view never shows raw, because it acts on the terminal or cannot be seen: control characters
 * (C0, DEL, C1), line and paragraph separators, format characters (Unicode Cf: zero-width space, joiners,
 * bidirectional marks and overrides, soft hyphen, byte-order mark, tags), the other default-ignorable
 * characters (variation selectors, fillers), lone surrogates, noncharacters, and the spaces other than
 * U+0020 (no-break and the like, which read as a plain space).
 */
const INVISIBLE =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}\p{Noncharacter_Code_Point}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/gu;

/**
 * The text with every control, invisible or format character written as a `\u{…}` escape — the notation
 * of stored reasons (core's `escapeControls`, which covers the controls) — so it prints on one line, cannot
 * move the cursor, clear the screen or reverse the text, and `z\u{200b}w` cannot pass for `zw`.
 * Backslashes are left as they are, so escaping twice changes nothing.
 *
 * @example
 * ```ts
 * printable('late\n| 99 | delivered'); // 'late\\u{a}| 99 | delivered'
 * printable('z\u200bw'); // 'z\\u{200b}w'
 * ```
 */
export function printable(value: string): string {
  return value.replace(INVISIBLE, (c) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`);
}

/**
 * Template tag for one piece of text output: the literal parts are kept, every interpolated value is
 * made {@link printable}. Every text renderer of the CLI builds its lines with it.
 *
 * @example
 * ```ts
 * io.stdout(text`created confirm job ${job.id} for order ${job.orderId}\n`);
 * ```
 */
export function text(strings: TemplateStringsArray, ...values: unknown[]): string {
  let out = strings[0] ?? '';
  for (const [i, value] of values.entries()) out += printable(String(value)) + (strings[i + 1] ?? '');
  return out;
}

/**
 * `JSON.stringify(value)` with the characters it leaves raw but a text view never shows raw (DEL, C1,
 * separators, bidi and other format characters, zero-width and other invisible ones: see
 * {@link printable}) written as `\uXXXX` escapes too: the same JSON value, safe to print on a terminal.
 *
 * @example
 * ```ts
 * io.stdout(`${jsonText({ jobs: jobs.map(jobView) })}\n`);
 * ```
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(value).replace(INVISIBLE, (c) =>
    // Per UTF-16 unit: a character beyond U+FFFF (a tag) is written as its two surrogate escapes.
    [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
}

/**
 * The kind of store a command opened, for messages: from the backend flag that chose it.
 *
 * @example
 * ```ts
 * backendName({ sqs: 'https://sqs...' }); // 'SQS'
 * ```
 */
export function backendName(flags: { db?: string | undefined; pg?: string | undefined }): string {
  if (flags.db !== undefined) return 'SQLite';
  return flags.pg !== undefined ? 'PostgreSQL' : 'SQS';
}

/** A job as `--json` output shows it. The click token is left out: an operator never needs it to act on a job. */
export interface JobView {
  id: string;
  kind: Job['kind'];
  orderId: string;
  /** The advertiser account of the order, or null for none (an order is its account and its order id). */
  account: string | null;
  state: Job['state'];
  attempts: number;
  createdAt: string;
  updatedAt: string;
  deadline: string | null;
  campaignId: string | null;
  /** A refund's campaign source (`answer`: the service's confirmation answer; `caller`), else null. */
  campaignFrom: 'answer' | 'caller' | null;
  /** The last error, or for dead/expired/unmatched jobs the reason. */
  reason: string | null;
}

/** ISO 8601 UTC string of epoch milliseconds, or null. */
export function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

/**
 * The stable JSON view of a job.
 *
 * @example
 * ```ts
 * io.stdout(`${JSON.stringify(jobView(job))}\n`);
 * ```
 */
export function jobView(job: Job): JobView {
  return {
    id: job.id,
    kind: job.kind,
    orderId: job.orderId,
    account: job.account,
    state: job.state,
    attempts: job.attempts,
    createdAt: iso(job.createdAt) as string,
    updatedAt: iso(job.updatedAt) as string,
    deadline: iso(job.deadline),
    campaignId: job.campaignId,
    campaignFrom: job.kind === 'refund' ? job.campaignFrom : null,
    reason: job.lastError,
  };
}

/**
 * A duration in its two largest units, rounded down to the second: `45s`, `5m 3s`, `3h 12m`, `2d 4h`
 * (the second unit left out when zero: `3h`). The sign is ignored.
 *
 * @example
 * ```ts
 * duration(3 * 3_600_000 + 12 * 60_000 + 59_000); // '3h 12m'
 * duration(2 * 86_400_000 + 4 * 3_600_000); // '2d 4h'
 * ```
 */
export function duration(ms: number): string {
  let rest = Math.floor(Math.abs(ms) / 1000);
  const parts: Array<[number, string]> = [];
  for (const [size, unit] of [
    [86_400, 'd'],
    [3_600, 'h'],
    [60, 'm'],
    [1, 's'],
  ] as const) {
    parts.push([Math.floor(rest / size), unit]);
    rest %= size;
  }
  const first = parts.findIndex(([n]) => n > 0);
  if (first === -1) return '0s';
  return parts
    .slice(first, first + 2)
    .filter(([n], i) => i === 0 || n > 0)
    .map(([n, unit]) => `${n}${unit}`)
    .join(' ');
}

/**
 * A time relative to `now`: `in 3h 12m`, `3h 12m ago`, or `now` within a second.
 *
 * @example
 * ```ts
 * relative(now + 2 * 86_400_000 + 4 * 3_600_000, now); // 'in 2d 4h'
 * relative(now - 12_000, now); // '12s ago'
 * ```
 */
export function relative(ms: number, now: number): string {
  if (Math.abs(ms - now) < 1000) return 'now';
  return ms > now ? `in ${duration(ms - now)}` : `${duration(now - ms)} ago`;
}

/**
 * How every text output shows a time: ISO 8601 UTC, then relative to `now` —
 * `2026-01-02T03:04:05.000Z (in 3h 12m)` or `(5m 3s ago)`; `-` for none.
 *
 * @example
 * ```ts
 * when(Date.now() + 3 * 3_600_000, Date.now()); // '2026-...Z (in 3h)'
 * ```
 */
export function when(ms: number | null, now: number): string {
  return ms === null ? '-' : `${new Date(ms).toISOString()} (${relative(ms, now)})`;
}

/**
 * How long something took: `850ms` under a second, `3.2s` under a minute, else {@link duration}.
 *
 * @example
 * ```ts
 * elapsed(3_240); // '3.2s'
 * ```
 */
export function elapsed(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`;
  return duration(ms);
}

/**
 * A {@link printable} text cut to `max` characters, the last one an ellipsis when cut. Cuts after
 * escaping, so an escape never grows a cut field past `max`.
 *
 * @example
 * ```ts
 * cut('Ad service answered 404: click_token not found', 20); // 'Ad service answered…'
 * ```
 */
export function cut(value: string, max: number): string {
  const shown = printable(value);
  return shown.length <= max ? shown : `${shown.slice(0, Math.max(0, max - 1))}…`;
}

/**
 * The width of each of the first `columns` columns: its longest cell over `rows`, in one pass (rows of any
 * number: never spread into `Math.max`'s arguments, which overflows the stack past ~10^5 of them).
 *
 * @example
 * ```ts
 * columnWidths([['ID', 'STATE'], ['12', 'delivered']], 2); // [2, 9]
 * ```
 */
export function columnWidths(rows: Iterable<readonly string[]>, columns: number): number[] {
  const widths = new Array<number>(columns).fill(0);
  for (const row of rows)
    for (let i = 0; i < columns; i++) widths[i] = Math.max(widths[i] as number, (row[i] ?? '').length);
  return widths;
}

/**
 * A writer of many short pieces of text that hands `write` a chunk of about {@link CHUNK_CHARS}
 * characters at a time, and the rest at `flush()`: a table of 200,000 lines is 200,000 short strings,
 * not one, and not 200,000 writes either.
 *
 * @example
 * ```ts
 * const out = chunked((text) => io.stdout(text));
 * for (const row of rows) out.write(`${row}\n`);
 * out.flush();
 * ```
 */
export function chunked(write: (text: string) => void): { write(text: string): void; flush(): void } {
  let pending: string[] = [];
  let size = 0;
  const flush = () => {
    if (pending.length === 0) return;
    write(pending.join(''));
    pending = [];
    size = 0;
  };
  return {
    write(text) {
      if (text === '') return;
      pending.push(text);
      size += text.length;
      if (size >= CHUNK_CHARS) flush();
    },
    flush,
  };
}

/** About how many characters {@link chunked} gathers before writing. */
const CHUNK_CHARS = 64 * 1024;

/** One send of a job as `--json` output shows it. */
export interface AttemptView {
  startedAt: string;
  durationMs: number;
  outcome: string;
  /** The service's HTTP status, or null when there was no answer (timeout, reset). */
  status: number | null;
  detail: string | null;
}

/** The JSON view of one attempt. */
export function attemptView(attempt: AttemptRecord): AttemptView {
  return {
    startedAt: iso(attempt.startedAt) as string,
    durationMs: attempt.durationMs,
    outcome: attempt.outcome,
    status: attempt.status,
    detail: attempt.detail,
  };
}

/** A job with every time an operator looks at (`jobs`, `job`): {@link JobView} plus these. */
export interface JobDetailView extends JobView {
  nextAttemptAt: string;
  deliveredAt: string | null;
  maybeAppliedAt: string | null;
}

/**
 * The JSON view of a job in `postback jobs` and `postback job`.
 *
 * @example
 * ```ts
 * io.stdout(`${jsonText(jobDetailView(job))}\n`);
 * ```
 */
export function jobDetailView(job: Job): JobDetailView {
  return {
    ...jobView(job),
    nextAttemptAt: iso(job.nextAttemptAt) as string,
    deliveredAt: iso(job.deliveredAt),
    maybeAppliedAt: iso(job.maybeAppliedAt),
  };
}

/**
 * One line describing a job for text output; every field {@link printable}.
 *
 * @example
 * ```ts
 * io.stdout(`${jobs.map(jobLine).join('\n')}\n`);
 * ```
 */
export function jobLine(job: Job): string {
  const reason = job.lastError === null ? '' : text`  ${job.lastError}`;
  return text`${job.id}  ${job.kind.padEnd(7)}  ${orderText(job)}  attempts ${job.attempts}` + reason;
}

/**
 * An order as text output names it: `order 1001`, or `order 1001 of account shop-17` for an order of an
 * advertiser account (two accounts may both have an order 1001); every field {@link printable}.
 *
 * @example
 * ```ts
 * io.stdout(`created confirm job ${job.id} for ${orderText(job)}\n`);
 * ```
 */
export function orderText(order: { orderId: string; account: string | null }): string {
  return order.account === null
    ? text`order ${order.orderId}`
    : text`order ${order.orderId} of account ${order.account}`;
}

/**
 * The job-file format of `postback enqueue`: one JSON object per line, either
 * `{"kind":"confirm","click_token":"…","order_id":"…","value_micros":123,"clicked_at":"2026-01-02T03:04:05Z"}`
 * or `{"kind":"refund","order_id":"…","campaign_id":"cmp_…"}` (`campaign_id` optional). Either may carry
 * `"account":"…"`, the advertiser account of the order (absent or `null`: none).
 *
 * {@link parseJobLine} is a pure function that never throws: a bad line yields the field at fault and why,
 * so the command can report it by line number and go on. {@link readLines} streams a file line by line so
 * memory stays bounded whatever the file size.
 */
import { type FileHandle, open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { type ConfirmInput, JobValidationError, parseClickTime, type RefundInput } from '@postback/core';
import { validateAccount } from '@postback/core/store';

/** A good line: what to enqueue. */
export type JobLine = { kind: 'confirm'; input: ConfirmInput } | { kind: 'refund'; input: RefundInput };

/** A bad line: the field at fault (null when the line is not a JSON object at all) and why. */
export interface LineError {
  field: string | null;
  message: string;
}

/** Outcome of parsing one line. Blank lines are `skip`. */
export type ParsedLine = { ok: true; job: JobLine } | { ok: false; error: LineError } | { ok: 'skip' };

const CONFIRM_KEYS = new Set(['kind', 'account', 'click_token', 'order_id', 'value_micros', 'clicked_at']);
const REFUND_KEYS = new Set(['kind', 'account', 'order_id', 'campaign_id']);
function bad(field: string | null, message: string): ParsedLine {
  return { ok: false, error: { field, message } };
}

/**
 * Parses a click time: an ISO 8601 string with a zone (`Z` or `±hh:mm`) or epoch milliseconds, by core's
 * `parseClickTime` (impossible dates such as 30 February are refused, not rolled into March).
 * Returns null when the value is neither.
 *
 * @example
 * ```ts
 * parseClickedAt('2026-01-02T03:04:05Z'); // 1767323045000
 * ```
 */
export function parseClickedAt(value: unknown): number | null {
  try {
    return parseClickTime(value, 'clicked_at');
  } catch {
    return null;
  }
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/**
 * Parses one line of a job file. Never throws. Checks shape and types (kind, required fields, unknown
 * keys, integer micros, click time); the outbox checks the rest (token format, id lengths) at enqueue.
 *
 * @example
 * ```ts
 * const parsed = parseJobLine('{"kind":"refund","order_id":"o-1"}');
 * if (parsed.ok === true) await outbox.refund(parsed.job.input);
 * ```
 */
export function parseJobLine(line: string): ParsedLine {
  if (line.trim() === '') return { ok: 'skip' };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return bad(null, 'not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return bad(null, 'not a JSON object');
  const record = value as Record<string, unknown>;
  const kind = record.kind;
  if (kind !== 'confirm' && kind !== 'refund') return bad('kind', "must be 'confirm' or 'refund'");
  const allowed = kind === 'confirm' ? CONFIRM_KEYS : REFUND_KEYS;
  const unknown = Object.keys(record).find((key) => !allowed.has(key));
  if (unknown !== undefined) return bad(unknown, `unknown field for a ${kind} line`);
  if (!nonEmptyString(record.order_id)) return bad('order_id', 'must be a non-empty string');
  const orderId = record.order_id;
  let account: string | null;
  try {
    account = validateAccount(record.account);
  } catch (error) {
    const why = error instanceof JobValidationError ? error.message.replace(/^Invalid [^:]*: /, '') : '';
    return bad('account', why || 'is not a valid account');
  }
  const ofAccount = account === null ? {} : { account };

  if (kind === 'refund') {
    if (record.campaign_id === undefined)
      return { ok: true, job: { kind, input: { orderId, ...ofAccount } } };
    if (!nonEmptyString(record.campaign_id)) return bad('campaign_id', 'must be a non-empty string');
    return { ok: true, job: { kind, input: { orderId, ...ofAccount, campaignId: record.campaign_id } } };
  }

  if (!nonEmptyString(record.click_token)) return bad('click_token', 'must be a non-empty string');
  const valueMicros = record.value_micros;
  if (typeof valueMicros !== 'number' || !Number.isSafeInteger(valueMicros) || valueMicros < 0) {
    return bad('value_micros', 'must be a non-negative integer number of micros');
  }
  if (record.clicked_at === undefined) return bad('clicked_at', 'is required');
  const clickedAt = parseClickedAt(record.clicked_at);
  if (clickedAt === null) {
    return bad(
      'clicked_at',
      'must be an ISO 8601 time with a zone (e.g. 2026-01-02T03:04:05Z) or epoch milliseconds',
    );
  }
  return {
    ok: true,
    job: {
      kind,
      input: { orderId, ...ofAccount, valueMicros, click: { token: record.click_token, clickedAt } },
    },
  };
}

/**
 * Longest line accepted, in characters (1 Mi). A job line is a few hundred bytes; without a cap, a file with no newline
 * would be read whole into memory. A longer line is yielded as {@link TOO_LONG} and reported as bad.
 */
export const MAX_LINE_LENGTH = 1_048_576;

/** Stands for a line longer than {@link MAX_LINE_LENGTH} (its text is dropped as it streams by). */
export const TOO_LONG = Symbol('line too long');

/**
 * Opens the input of `enqueue --from`: `-` is `stdin`; a path must name something readable that is not a
 * folder (a file, a pipe, `/dev/stdin`). Checked before the command opens its backend, so a bad `--from`
 * creates no database: a {@link InputError} names the path and why.
 *
 * @example
 * ```ts
 * for await (const line of readLines(await openInput('jobs.ndjson'))) console.log(line);
 * ```
 */
export async function openInput(path: string, stdin: Readable = process.stdin): Promise<Readable> {
  if (path === '-') return stdin;
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new InputError(
      code === 'ENOENT'
        ? `no such file: ${path}`
        : `cannot read ${path} (${typeof code === 'string' ? code : 'error'})`,
    );
  }
  if ((await handle.stat()).isDirectory()) {
    await handle.close();
    throw new InputError(`${path} is a folder, not a file of JSON lines`);
  }
  return handle.createReadStream({ encoding: 'utf8' });
}

/** An input that cannot be read (see {@link openInput}); its message names the path. */
export class InputError extends Error {
  override name = 'InputError';
}

/**
 * Streams the lines of an input (see {@link openInput}), one at a time, with the stream's own
 * backpressure: at most one chunk and one partial line are held, whatever the file size. Handles `\n` and
 * `\r\n`; a last line without a newline is yielded too.
 *
 * @example
 * ```ts
 * for await (const line of readLines(await openInput('jobs.ndjson'))) console.log(line);
 * ```
 */
export async function* readLines(
  input: AsyncIterable<string | Buffer>,
): AsyncGenerator<string | typeof TOO_LONG> {
  const decoder = new TextDecoder();
  let partial = '';
  let skipping = false;
  for await (const chunk of input) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      const line = partial + text.slice(start, end);
      partial = '';
      start = end + 1;
      if (skipping) {
        skipping = false;
        yield TOO_LONG;
      } else {
        yield line.endsWith('\r') ? line.slice(0, -1) : line;
      }
    }
    if (!skipping) {
      partial += text.slice(start);
      if (partial.length > MAX_LINE_LENGTH) {
        partial = '';
        skipping = true;
      }
    }
  }
  if (skipping) yield TOO_LONG;
  else if (partial !== '') yield partial.endsWith('\r') ? partial.slice(0, -1) : partial;
}

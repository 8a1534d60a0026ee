/**
 * `postback enqueue --from JOBS.ndjson`: enqueue many confirmations and refunds from a file (or stdin),
 * one JSON object per line. The file is streamed, so memory stays bounded whatever its size; each bad
 * line is reported by number and field and skipped, and the good ones are all enqueued.
 */
import type { Readable } from 'node:stream';
import { deadlineOf, type Outbox } from '@postback/core';
import { validateConfirmInput, validateRefundInput } from '@postback/core/store';
import { backendFlags, EXIT, UsageError, validationProblem } from '../args.ts';
import { countWindow, emptyWindows, type WindowSummary, windowsLine } from '../backfill-windows.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { jsonText, text } from '../format.ts';
import type { CommandIo } from '../io.ts';
import {
  InputError,
  type JobLine,
  type LineError,
  MAX_LINE_LENGTH,
  openInput,
  parseJobLine,
  readLines,
  TOO_LONG,
} from '../ndjson.ts';
import { enqueueSpec, MAX_REPORTED_ERRORS } from '../specs/enqueue.ts';

/** How many enqueues may be awaited at once: lets a group-committing store batch writes. */
const WINDOW = 512;

const NDJSON_FIELD_OF: Readonly<Record<string, string>> = {
  orderId: 'order_id',
  valueMicros: 'value_micros',
  click: 'click_token',
  'click.token': 'click_token',
  'click.clickedAt': 'clicked_at',
  campaignId: 'campaign_id',
};

/** The summary `enqueue --json` prints. */
export interface EnqueueSummary {
  lines: number;
  confirms: { created: number; existing: number };
  /**
   * Refund lines by the outcome of `outbox.refund`; an outcome this version does not know (a later core
   * may add one) is counted under its own name.
   */
  refunds: {
    enqueued: number;
    duplicate: number;
    cancelled: number;
    'not-charged': number;
    updated: number;
  } & Record<string, number>;
  invalid: number;
  errors: Array<{ line: number } & LineError>;
  /** The confirmations by their window at the start of the run (`backfill-windows.ts`). */
  windows: WindowSummary;
}

/** What `enqueue --dry-run --json` prints: the lines read and checked, nothing written. */
export interface EnqueueDryRunSummary {
  dryRun: true;
  lines: number;
  /** Good lines of each kind (whether an order is already in the outbox is not looked up). */
  confirms: number;
  refunds: number;
  invalid: number;
  errors: Array<{ line: number } & LineError>;
  windows: WindowSummary;
}

async function enqueueOne(outbox: Outbox, job: JobLine, summary: EnqueueSummary, now: number): Promise<void> {
  if (job.kind === 'confirm') {
    const { created, job: stored } = await outbox.confirm(job.input);
    summary.confirms[created ? 'created' : 'existing'] += 1;
    // The deadline the store stamped (an order already there: its own), as the worker will read it.
    countWindow(summary.windows, stored.deadline ?? deadlineOf(stored.clickedAt), stored.valueMicros, now);
  } else {
    const { outcome } = await outbox.refund(job.input);
    summary.refunds[outcome] =
      (Object.hasOwn(summary.refunds, outcome) ? (summary.refunds[outcome] ?? 0) : 0) + 1;
  }
}

const KNOWN_OUTCOMES = new Set(['enqueued', 'duplicate', 'cancelled', 'not-charged', 'updated']);

/** The refund outcomes this version has no words for, as `, 2 window-closed`. */
function otherOutcomes(refunds: Record<string, number>): string {
  return Object.entries(refunds)
    .filter(([outcome]) => !KNOWN_OUTCOMES.has(outcome))
    .map(([outcome, n]) => text`, ${n} ${outcome}`)
    .join('');
}

/**
 * Reports a bad line: counted, kept (the first {@link MAX_REPORTED_ERRORS}) for `--json`, else written on
 * stderr as `line N: field: reason`.
 */
function lineReporter(
  target: { invalid: number; errors: Array<{ line: number } & LineError> },
  json: boolean,
  io: CommandIo,
): (line: number, error: LineError) => void {
  return (line, error) => {
    target.invalid += 1;
    if (target.errors.length < MAX_REPORTED_ERRORS) target.errors.push({ line, ...error });
    if (!json)
      io.stderr(
        `line ${line}: ${error.field === null ? '' : text`${error.field}: `}${text`${error.message}`}\n`,
      );
  };
}

/**
 * The job lines of `input` with their numbers, counted in `summary.lines` (blank lines are not); a line
 * too long or not a job is reported and skipped.
 */
async function* jobLines(
  input: Readable,
  summary: { lines: number },
  report: (line: number, error: LineError) => void,
): AsyncGenerator<{ lineNo: number; job: JobLine }> {
  let lineNo = 0;
  for await (const line of readLines(input)) {
    lineNo += 1;
    if (line === TOO_LONG) {
      summary.lines += 1;
      report(lineNo, { field: null, message: `line longer than ${MAX_LINE_LENGTH} characters` });
      continue;
    }
    const parsed = parseJobLine(line);
    if (parsed.ok === 'skip') continue;
    summary.lines += 1;
    if (parsed.ok === false) report(lineNo, parsed.error);
    else yield { lineNo, job: parsed.job };
  }
}

/** A line's problem as the real run reports it: core's field named as the file names it. */
function lineProblem(error: unknown): LineError | null {
  const problem = validationProblem(error);
  return problem === null
    ? null
    : { field: NDJSON_FIELD_OF[problem.field] ?? problem.field, message: problem.reason };
}

/**
 * `--dry-run`: reads and checks every line as the real run would (the file's format, then core's rules),
 * counts the confirmations inside and past their windows, and opens no backend: nothing is written, no
 * database file is created. Whether an order is already in the outbox is not looked up.
 */
async function dryRun(input: Readable, json: boolean, now: number, io: CommandIo): Promise<number> {
  const summary: EnqueueDryRunSummary = {
    dryRun: true,
    lines: 0,
    confirms: 0,
    refunds: 0,
    invalid: 0,
    errors: [],
    windows: emptyWindows(),
  };
  const report = lineReporter(summary, json, io);
  for await (const { lineNo, job } of jobLines(input, summary, report)) {
    try {
      if (job.kind === 'confirm') {
        const checked = validateConfirmInput(job.input, { now });
        summary.confirms += 1;
        countWindow(summary.windows, deadlineOf(checked.click.clickedAt), checked.valueMicros, now);
      } else {
        validateRefundInput(job.input);
        summary.refunds += 1;
      }
    } catch (error) {
      const problem = lineProblem(error);
      if (problem === null) throw error;
      report(lineNo, problem);
    }
  }
  if (json) {
    io.stdout(`${jsonText(summary)}\n`);
  } else {
    io.stdout(
      'dry run: nothing was written\n' +
        `${summary.lines} line(s): ${summary.confirms} confirm(s), ${summary.refunds} refund(s); ${summary.invalid} invalid\n` +
        `${windowsLine(summary.windows)}\n`,
    );
  }
  return summary.invalid > 0 ? EXIT.failed : EXIT.ok;
}

/**
 * Builds the `enqueue` command with its dependencies.
 *
 * @example
 * ```ts
 * await createEnqueueCommand().run(['--db', 'a.db', '--from', 'jobs.ndjson'], io);
 * ```
 */
export function createEnqueueCommand(
  ctx: CommandContext = defaultContext,
  stdin: Readable = process.stdin,
): Command {
  return defineCommand(enqueueSpec, async ({ values }, io) => {
    // The input first: a --from that cannot be read is a usage error before any database is created.
    let input: Readable;
    try {
      input = await openInput(values.from, stdin);
    } catch (error) {
      if (error instanceof InputError) throw new UsageError(`--from: ${error.message}`);
      throw error;
    }
    const now = ctx.now();
    if (values['dry-run']) return dryRun(input, values.json, now, io);
    let backend: Awaited<ReturnType<typeof openFromFlags>>;
    try {
      backend = await openFromFlags(ctx, backendFlags(values), io.env);
    } catch (error) {
      if (input !== stdin) input.destroy();
      throw error;
    }
    const summary: EnqueueSummary = {
      lines: 0,
      confirms: { created: 0, existing: 0 },
      refunds: { enqueued: 0, duplicate: 0, cancelled: 0, 'not-charged': 0, updated: 0 },
      invalid: 0,
      errors: [],
      windows: emptyWindows(),
    };
    const report = lineReporter(summary, values.json, io);
    // In-flight enqueues by order (its account and order id): a second line for the same order waits for
    // the first, so a refund never races ahead of the confirmation it reverses.
    const inflight = new Map<string, Promise<void>>();
    // A store failure (not a bad line) stops the run; kept here rather than thrown from the promise,
    // which nobody awaits until the window settles.
    let fatal: Error | null = null;
    const settle = async () => {
      await Promise.all(inflight.values());
      inflight.clear();
      if (fatal !== null) throw fatal;
    };
    try {
      for await (const { lineNo, job } of jobLines(input, summary, report)) {
        const order = JSON.stringify([job.input.account ?? null, job.input.orderId]);
        if (inflight.size >= WINDOW || inflight.has(order)) await settle();
        inflight.set(
          order,
          enqueueOne(backend.outbox, job, summary, now).catch((error: unknown) => {
            const problem = lineProblem(error);
            if (problem === null) {
              fatal ??= new Error(
                `line ${lineNo}: ${error instanceof Error ? error.message : String(error)}`,
                {
                  cause: error,
                },
              );
              return;
            }
            report(lineNo, problem);
          }),
        );
      }
      await settle();
    } finally {
      await Promise.allSettled(inflight.values());
      await backend.outbox.close();
    }
    if (values.json) {
      io.stdout(`${jsonText(summary)}\n`);
    } else {
      const r = summary.refunds;
      io.stdout(
        `${summary.lines} line(s): confirms ${summary.confirms.created} created, ${summary.confirms.existing} already there; ` +
          `refunds ${r.enqueued} enqueued, ${r.duplicate} already there, ${r.cancelled} cancelled unsent, ${r['not-charged']} not charged, ${r.updated} given a campaign` +
          otherOutcomes(r) +
          '; ' +
          `${summary.invalid} invalid\n${windowsLine(summary.windows)}\n`,
      );
    }
    return summary.invalid > 0 ? EXIT.failed : EXIT.ok;
  });
}

export const command: Command = createEnqueueCommand();

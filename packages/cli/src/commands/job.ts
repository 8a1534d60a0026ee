/**
 * `postback job`: one job whole — every field an operator acts on, and its attempt history (each send:
 * when, how long, outcome, HTTP status, the service's detail) — or both jobs of an order.
 */
import type { AttemptRecord, Job, Outbox } from '@postback/core';
import { backendFlags, EXIT, UsageError } from '../args.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { accountFilter } from '../flags.ts';
import {
  type AttemptView,
  attemptView,
  columnWidths,
  elapsed,
  type JobDetailView,
  jobDetailView,
  jsonText,
  orderText,
  printable,
  text,
  when,
} from '../format.ts';
import { jobSpec } from '../specs/job.ts';

/**
 * What `postback job` prints for one job: the job, and its history — null when the backend kept none for
 * it and does not keep every job's (`features.attemptHistory` false: SQS keeps only its dead letters').
 */
export interface JobReport {
  job: Job;
  history: AttemptRecord[] | null;
}

/** The `--json` view of a job with its history. */
export type JobReportView = JobDetailView & { history: AttemptView[] | null };

function reportView(report: JobReport): JobReportView {
  return { ...jobDetailView(report.job), history: report.history?.map(attemptView) ?? null };
}

/**
 * Said instead of a history when the backend kept none for the job and does not keep every job's
 * (`features.attemptHistory` false).
 */
export const NO_HISTORY = "none kept (this backend does not keep every job's attempts)";

/**
 * The status column of an attempt: the HTTP status; for a delivery whose status was not recorded, `2xx`
 * (a delivery is a 2xx answer); `no answer` for a send that got none (timeout, reset).
 */
function statusText(attempt: AttemptRecord): string {
  if (attempt.status !== null) return String(attempt.status);
  return attempt.outcome === 'delivered' ? '2xx' : 'no answer';
}

/** The attempts as aligned lines: start (ISO and relative), duration, outcome, status, detail. */
function attemptLines(history: readonly AttemptRecord[], now: number): string[] {
  const rows = history.map((attempt) => [
    when(attempt.startedAt, now),
    elapsed(attempt.durationMs),
    text`${attempt.outcome}`,
    statusText(attempt),
    attempt.detail === null ? '' : text`${attempt.detail}`,
  ]);
  const widths = columnWidths(rows, 4);
  return rows.map((row) =>
    `    ${row.map((cell, i) => (i === 1 ? cell.padStart(widths[i] as number) : i < 4 ? cell.padEnd(widths[i] as number) : cell)).join('  ')}`.trimEnd(),
  );
}

/** Where a refund's campaign came from, as shown after it. */
const CAMPAIGN_SOURCES: Readonly<Record<string, string>> = {
  answer: " (from the service's confirmation answer)",
  caller: ' (given by hand or by the app)',
  unknown: '',
};

/**
 * A job and its history as text, every field printable and every time ISO 8601 with the time relative
 * to `now`.
 */
export function jobText({ job, history }: JobReport, now: number): string {
  const source = job.kind === 'refund' ? CAMPAIGN_SOURCES[job.campaignFrom ?? 'unknown'] : '';
  const rows: Array<[string, string]> = [
    ['state', job.state === 'unmatched' ? 'unmatched (no such conversion at the service)' : job.state],
    ['kind', job.kind],
    ['order', text`${job.orderId}`],
    ['account', job.account === null ? '-' : text`${job.account}`],
    ['campaign', job.campaignId === null ? '-' : `${text`${job.campaignId}`}${source}`],
    ['attempts', String(job.attempts)],
    ['created', when(job.createdAt, now)],
    ['updated', when(job.updatedAt, now)],
    ['next attempt', job.state === 'pending' ? when(job.nextAttemptAt, now) : '-'],
    [
      'deadline',
      job.deadline === null ? '- (set when its confirmation is delivered)' : when(job.deadline, now),
    ],
    ['delivered', when(job.deliveredAt, now)],
    ['maybe applied', when(job.maybeAppliedAt, now)],
    ['last error', job.lastError === null ? '-' : text`${job.lastError}`],
  ];
  if (job.lease !== null) rows.push(['lease until', when(job.lease.expiresAt, now)]);
  const lines = [text`job ${job.id}`, ...rows.map(([name, value]) => `  ${name.padEnd(15)}${value}`)];
  if (history === null) lines.push(`  history        ${NO_HISTORY}`);
  else if (history.length === 0) lines.push('  history        no attempt recorded');
  else {
    lines.push(`  history        ${history.length} attempt(s), oldest first:`);
    lines.push(...attemptLines(history, now));
  }
  return lines.join('\n');
}

/** How many other accounts {@link elsewhere} names at most. */
const MAX_ACCOUNTS_NAMED = 5;

/**
 * When an order is not found in `account`: the accounts (or "no account") that do have an order with
 * this id, as a hint (`; order 1001 exists in account shop-17: give --account shop-17`), or '' when none
 * does or the backend cannot list its jobs.
 */
async function elsewhere(outbox: Outbox, orderId: string, account: string | null): Promise<string> {
  const { listableStates } = outbox.features;
  if (listableStates.length === 0) return '';
  const jobs = await outbox.listJobs({ orderId, states: listableStates, limit: 100 });
  const others = [...new Set(jobs.map((job) => job.account))].filter((a) => a !== account);
  if (others.length === 0) return '';
  const named = others
    .slice(0, MAX_ACCOUNTS_NAMED)
    .map((a) => (a === null ? 'without an account (leave out --account)' : `in account ${printable(a)}`));
  const more = others.length > MAX_ACCOUNTS_NAMED ? `, and ${others.length - MAX_ACCOUNTS_NAMED} more` : '';
  return `; order ${printable(orderId)} exists ${named.join(', ')}${more}: give --account ID`;
}

/**
 * The job and what the backend kept of its attempts. Asked of every backend: one that does not keep every
 * job's attempts may still have this one's (SQS: a dead letter carries its own).
 */
async function report(outbox: Outbox, job: Job): Promise<JobReport> {
  const history = await outbox.history(job.id);
  return { job, history: history.length === 0 && !outbox.features.attemptHistory ? null : history };
}

/**
 * Builds the `job` command with its dependencies (tests inject an outbox or a clock).
 *
 * @example
 * ```ts
 * await createJobCommand().run(['--db', 'postback.db', '--order', 'A-1001'], io);
 * ```
 */
export function createJobCommand(ctx: CommandContext = defaultContext): Command {
  return defineCommand(jobSpec, async ({ values, positionals }, io) => {
    const [id, ...extra] = positionals;
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
    if (id !== undefined && values.order !== undefined)
      throw new UsageError('give either ID or --order, not both');
    if (id === undefined && values.order === undefined)
      throw new UsageError('give a job ID or --order ORDER');
    if (id !== undefined && values.account !== undefined)
      throw new UsageError('--account goes with --order (an id names one job, whatever its account)');
    if (values.account === '')
      throw new UsageError('--account must not be empty (leave it out for the order without an account)');
    // An order is its account and its order id; without --account it is the order without one.
    const account = accountFilter({ account: values.account }) ?? null;
    const backend = await openFromFlags(ctx, backendFlags(values), io.env, { readOnly: true });
    try {
      const now = ctx.now();
      const outbox = backend.outbox;
      if (id !== undefined) {
        const job = await outbox.get(id);
        if (job === null) {
          io.stderr(text`postback job: no job with id ${id}\n`);
          return EXIT.failed;
        }
        const found = await report(outbox, job);
        io.stdout(values.json ? `${jsonText(reportView(found))}\n` : `${jobText(found, now)}\n`);
        return EXIT.ok;
      }
      const orderId = values.order as string;
      // The confirmation first, then its refund.
      const jobs = (await outbox.getByOrder(orderId, account)).sort((a, b) =>
        a.kind === b.kind ? 0 : a.kind === 'confirm' ? -1 : 1,
      );
      if (jobs.length === 0) {
        io.stderr(
          `postback job: no job for ${orderText({ orderId, account })}${await elsewhere(outbox, orderId, account)}\n`,
        );
        return EXIT.failed;
      }
      const found: JobReport[] = [];
      for (const job of jobs) found.push(await report(outbox, job));
      if (values.json) io.stdout(`${jsonText({ orderId, account, jobs: found.map(reportView) })}\n`);
      else io.stdout(`${found.map((r) => jobText(r, now)).join('\n\n')}\n`);
      return EXIT.ok;
    } finally {
      await backend.outbox.close();
    }
  });
}

export const command: Command = createJobCommand();

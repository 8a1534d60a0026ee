/**
 * `postback jobs`: the jobs an operator is looking for — by state, reason, HTTP status, order, kind,
 * closeness of the deadline or age — most urgent first, as a table or as NDJSON.
 */
import { JOB_STATES, type Job, type JobFilter, type JobState, type Outbox } from '@postback/core';
import { backendFlags, EXIT, UsageError } from '../args.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { accountFilter, type ParsedCommand } from '../flags.ts';
import { backendName, cut, jobDetailView, jsonText, printable, text, when } from '../format.ts';
import type { CommandIo } from '../io.ts';
import { jobsSpec } from '../specs/jobs.ts';

type Values = ParsedCommand<typeof jobsSpec.flags>['values'];

/** Width of a line when stdout is not a terminal (or its width is unknown). */
const DEFAULT_WIDTH = 80;
/** The last-error column never gets narrower than this, however narrow the terminal. */
const MIN_ERROR_WIDTH = 20;

/** The states of `--state S[,S]`, checked. */
function parseStates(value: string | undefined): JobState[] {
  if (value === undefined) return [];
  const states = value.split(',').map((s) => s.trim());
  for (const state of states) {
    if (!JOB_STATES.includes(state as JobState)) {
      throw new UsageError(`--state must be among ${JOB_STATES.join(', ')}, got '${state}'`);
    }
  }
  return [...new Set(states as JobState[])];
}

/** The store's filter from the flags; durations are counted from `now`. */
export function jobFilter(values: Values, now: number): JobFilter {
  const filter: JobFilter = { limit: values.limit, offset: values.offset };
  const states = parseStates(values.state);
  if (states.length > 0) filter.states = states;
  if (values.reason !== undefined) {
    try {
      filter.reason = new RegExp(values.reason);
    } catch (error) {
      throw new UsageError(`--reason is not a valid regular expression: ${(error as Error).message}`);
    }
  }
  if (values.status !== undefined) filter.status = values.status;
  if (values.order !== undefined) filter.orderId = values.order;
  const account = accountFilter(values);
  if (account !== undefined) filter.account = account;
  if (values.kind !== undefined) filter.kind = values.kind;
  if (values['deadline-within'] !== undefined) filter.deadlineBefore = now + values['deadline-within'];
  if (values['older-than'] !== undefined) filter.updatedBefore = now - values['older-than'];
  return filter;
}

/** How wide a text line may be: `COLUMNS`, else the terminal's width, else 80. */
export function lineWidth(io: CommandIo): number {
  const fromEnv = Number(io.env.COLUMNS);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  const columns = io.isTTY ? process.stdout.columns : undefined;
  return columns !== undefined && columns > 0 ? columns : DEFAULT_WIDTH;
}

/**
 * The jobs as a table with a header row; every field {@link printable}, the last error cut so a row fits
 * `width` (on a terminal) or to 80 characters.
 */
export function jobsTable(jobs: readonly Job[], now: number, width: number, isTTY: boolean): string {
  const rows = jobs.map((job) => [
    printable(job.id),
    printable(job.orderId),
    job.account === null ? '-' : printable(job.account),
    job.kind,
    job.state,
    String(job.attempts),
    when(job.deadline, now),
  ]);
  const header = ['ID', 'ORDER', 'ACCOUNT', 'KIND', 'STATE', 'ATTEMPTS', 'DEADLINE'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const used = widths.reduce((sum, w) => sum + w + 2, 0);
  const errorWidth = isTTY ? Math.max(MIN_ERROR_WIDTH, width - used) : DEFAULT_WIDTH;
  const line = (cells: string[], error: string) =>
    `${cells.map((cell, i) => cell.padEnd(widths[i] as number)).join('  ')}  ${error}`.trimEnd();
  return [
    line(header, 'LAST ERROR'),
    ...jobs.map((job, i) =>
      line(rows[i] as string[], job.lastError === null ? '-' : cut(job.lastError, errorWidth)),
    ),
  ].join('\n');
}

/** Whether a page of `limit` jobs has more after it (a page of exactly `limit` may be the last). */
async function hasMore(outbox: Outbox, filter: JobFilter, shown: number): Promise<boolean> {
  if (shown < (filter.limit ?? 0)) return false;
  const next = await outbox.listJobs({ ...filter, offset: (filter.offset ?? 0) + shown, limit: 1 });
  return next.length > 0;
}

/**
 * Builds the `jobs` command with its dependencies (tests inject an outbox or a clock).
 *
 * @example
 * ```ts
 * await createJobsCommand().run(['--db', 'postback.db', '--state', 'dead', '--reason', '404'], io);
 * ```
 */
export function createJobsCommand(ctx: CommandContext = defaultContext): Command {
  return defineCommand(jobsSpec, async ({ values }, io) => {
    const now = ctx.now();
    const filter = jobFilter(values, now);
    const backend = await openFromFlags(ctx, backendFlags(values), io.env, { readOnly: true });
    try {
      const { listableStates } = backend.outbox.features;
      const unlistable = (filter.states ?? []).filter((state) => !listableStates.includes(state));
      if (unlistable.length > 0) {
        io.stderr(
          `postback jobs: the ${backendName(values)} backend cannot list ${unlistable.join(', ')} jobs; ` +
            `it lists only ${listableStates.length === 0 ? 'none' : listableStates.join(', ')}\n`,
        );
        return EXIT.usage;
      }
      const jobs = await backend.outbox.listJobs(filter);
      if (values.json) {
        for (const job of jobs) io.stdout(`${jsonText(jobDetailView(job))}\n`);
        return EXIT.ok;
      }
      const partial = filter.states === undefined && listableStates.length < JOB_STATES.length;
      const scope = partial
        ? ` (the ${backendName(values)} backend lists only ${listableStates.join(', ')} jobs)`
        : '';
      if (jobs.length === 0) {
        io.stdout(`no jobs match${scope}\n`);
        return EXIT.ok;
      }
      io.stdout(`${jobsTable(jobs, now, lineWidth(io), io.isTTY)}\n`);
      if (scope !== '') io.stdout(`${scope.trim().slice(1, -1)}\n`);
      if (await hasMore(backend.outbox, filter, jobs.length)) {
        io.stdout(text`more: postback jobs ... --offset ${(filter.offset ?? 0) + jobs.length}\n`);
      }
      return EXIT.ok;
    } finally {
      await backend.outbox.close();
    }
  });
}

export const command: Command = createJobsCommand();

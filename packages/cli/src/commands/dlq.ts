/**
 * `postback dlq list|replay|purge`: the dead-letter queue. Dead jobs keep the reason the service gave;
 * an operator lists them, replays them once the cause is fixed (jobs past their deadline become
 * `expired` instead — nothing is ever sent late), or purges them. `replay` and `purge` act on ids, on
 * every dead job, or on the dead jobs a filter selects (`--reason`, `--status`, `--older-than`, read
 * through `Outbox.listJobs`); `--dry-run` shows what they would do, and `purge` asks before deleting.
 */
import { type Job, MAX_LIST_JOBS_LIMIT, type Outbox } from '@postback/core';
import { backendFlags, EXIT, UsageError } from '../args.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { accountFilter, type ParsedCommand } from '../flags.ts';
import { iso, jobLine, jobView, jsonText, orderText, text } from '../format.ts';
import type { CommandIo } from '../io.ts';
import { cliActor, type LedgerHand, ledgerHand } from '../ledger-hand.ts';
import { createProgress } from '../progress.ts';
import { isYes, type Prompt, stdinPrompt } from '../prompt.ts';
import { DEFAULT_DLQ_LIMIT, dlqSpec } from '../specs/dlq.ts';

/** Page size of `replay --all`: small enough to show progress, large enough to be quick. */
const REPLAY_PAGE = 200;

/** Page size in which `list --account` reads the dead-letter queue to pick one account's jobs. */
const SCAN_PAGE = MAX_LIST_JOBS_LIMIT;

type Values = ParsedCommand<typeof dlqSpec.flags>['values'];

/** Which dead jobs `replay` or `purge` act on. */
type Selection =
  | { ids: string[] }
  | { all: true }
  | { filter: { reason?: RegExp; status?: number; olderThanMs?: number; account?: string | null } };

function reasonPattern(source: string): RegExp {
  try {
    return new RegExp(source);
  } catch (error) {
    const why = error instanceof Error ? error.message.replace(/^Invalid regular expression: /, '') : '';
    throw new UsageError(`--reason must be a regular expression, got '${source}' (${why})`);
  }
}

const FILTERS = '--reason, --status, --older-than, --account or --no-account';

function selection(values: Values): Selection {
  const ids = values.id ?? [];
  const account = accountFilter(values);
  const filter = {
    ...(values.reason === undefined ? {} : { reason: reasonPattern(values.reason) }),
    ...(values.status === undefined ? {} : { status: values.status }),
    ...(values['older-than'] === undefined ? {} : { olderThanMs: values['older-than'] }),
    ...(account === undefined ? {} : { account }),
  };
  const filtered = Object.keys(filter).length > 0;
  if (values.all && ids.length > 0) throw new UsageError('give either --id ID or --all, not both');
  if (filtered && ids.length > 0)
    throw new UsageError(`give either --id ID or filters (${FILTERS}), not both`);
  if (filtered) return { filter };
  if (values.all) return { all: true };
  if (ids.length === 0) throw new UsageError(`give --id ID (repeatable) or --all, or filter with ${FILTERS}`);
  return { ids };
}

/** The dead jobs among `ids`, and the ids that name no dead job. */
async function deadJobs(outbox: Outbox, ids: readonly string[]): Promise<{ dead: Job[]; missing: string[] }> {
  const dead: Job[] = [];
  const missing: string[] = [];
  for (const id of new Set(ids)) {
    const job = await outbox.get(id);
    if (job?.state === 'dead') dead.push(job);
    else missing.push(id);
  }
  return { dead, missing };
}

/**
 * Every dead job the selection names, read before anything changes (acting while paging would shift
 * the pages under the cursor).
 */
async function selectedJobs(
  outbox: Outbox,
  which: Selection,
  now: number,
): Promise<{ jobs: Job[]; missing: string[] }> {
  if ('ids' in which) {
    const { dead, missing } = await deadJobs(outbox, which.ids);
    return { jobs: dead, missing };
  }
  const f = 'filter' in which ? which.filter : {};
  const jobs: Job[] = [];
  for (let offset = 0; ; offset += MAX_LIST_JOBS_LIMIT) {
    const page = await outbox.listJobs({
      states: ['dead'],
      ...(f.reason === undefined ? {} : { reason: f.reason }),
      ...(f.status === undefined ? {} : { status: f.status }),
      ...(f.olderThanMs === undefined ? {} : { updatedBefore: now - f.olderThanMs }),
      ...(f.account === undefined ? {} : { account: f.account }),
      limit: MAX_LIST_JOBS_LIMIT,
      offset,
    });
    jobs.push(...page);
    if (page.length < MAX_LIST_JOBS_LIMIT) break;
  }
  return { jobs, missing: [] };
}

/**
 * Up to `limit` dead jobs after the cursor, oldest first as `listDead` pages them; with an account (or
 * `null`, none), only that account's, read page by page from the whole queue until enough are found.
 */
async function deadPage(
  outbox: Outbox,
  limit: number,
  after: string | undefined,
  account: string | null | undefined,
): Promise<Job[]> {
  if (account === undefined) return outbox.listDead({ limit, ...(after === undefined ? {} : { after }) });
  const found: Job[] = [];
  let cursor = after;
  // Bounded: each page moves the cursor forward, and the loop ends on a short page.
  for (;;) {
    const page = await outbox.listDead({
      limit: SCAN_PAGE,
      ...(cursor === undefined ? {} : { after: cursor }),
    });
    for (const job of page) {
      if (job.account !== account) continue;
      found.push(job);
      if (found.length === limit) return found;
    }
    if (page.length < SCAN_PAGE) return found;
    cursor = page.at(-1)?.id;
  }
}

async function list(outbox: Outbox, values: Values, io: CommandIo): Promise<number> {
  const limit = values.limit ?? DEFAULT_DLQ_LIMIT;
  // One more than asked tells whether another page follows without a count query.
  const page = await deadPage(outbox, limit + 1, values.after, accountFilter(values));
  const jobs = page.slice(0, limit);
  const next = page.length > limit ? (jobs.at(-1)?.id ?? null) : null;
  if (values.json) {
    io.stdout(`${jsonText({ jobs: jobs.map(jobView), next })}\n`);
    return EXIT.ok;
  }
  if (jobs.length === 0) {
    const account = accountFilter(values);
    const of =
      account === undefined ? '' : account === null ? ' without an account' : text` of account ${account}`;
    io.stdout(`no dead jobs${of}\n`);
    return EXIT.ok;
  }
  io.stdout(`${jobs.map(jobLine).join('\n')}\n`);
  if (next !== null) io.stdout(text`more: postback dlq list ... --after ${next}\n`);
  return EXIT.ok;
}

/** What became (or, in a dry run, would become) of the dead jobs a replay was asked for. */
interface ReplayReport {
  replayed: number;
  /** Dry run only: the jobs that would go back to pending. */
  replayedJobs: Job[];
  /** Past their deadline: `expired` instead of replayed, nothing sent. */
  expired: Job[];
  /** Dead confirmations whose order has a refund: `cancelled` instead of replayed. */
  cancelled: Job[];
}

/**
 * Replays one batch of dead jobs, then reads each back to tell the replayed from those the store expired
 * (deadline passed at `at`) or cancelled (the order was refunded meanwhile). A job a running worker
 * claimed or delivered just after the replay counts as replayed.
 */
async function replayBatch(
  outbox: Outbox,
  ids: readonly string[],
  at: number,
  report: ReplayReport,
  hand: LedgerHand,
) {
  const replayed = await outbox.replay({ ids }, at);
  let stayed = 0;
  for (const id of ids) {
    const job = await outbox.get(id);
    if (job?.state === 'expired' && job.deadline !== null && job.deadline <= at) report.expired.push(job);
    else if (job?.state === 'cancelled') report.cancelled.push(job);
    else {
      stayed += 1;
      if (job !== null) await hand.record('replay', job, at);
    }
  }
  // The store's count is the truth for how many went back to pending; the rest were read back above.
  report.replayed += Math.min(replayed, stayed);
}

/** What a replay of `jobs` at `at` would do, by the same rules as `Outbox.replay`, changing nothing. */
async function replayPlan(outbox: Outbox, jobs: readonly Job[], at: number, report: ReplayReport) {
  for (const job of jobs) {
    if (job.deadline !== null && job.deadline <= at) report.expired.push(job);
    else if (
      job.kind === 'confirm' &&
      (await outbox.getByOrder(job.orderId, job.account)).some((j) => j.kind === 'refund')
    )
      report.cancelled.push(job);
    else report.replayedJobs.push(job);
  }
  report.replayed = report.replayedJobs.length;
}

function notReplayedLine(job: Job): string {
  return `${text`  ${job.id}  ${job.kind.padEnd(7)}  `}${orderText(job)}${text`  deadline ${iso(job.deadline) ?? '-'}`}`;
}

function replayText(report: ReplayReport, dryRun: boolean): string {
  const [replay, expire, cancel] = dryRun
    ? ['would replay', 'would expire', 'would be cancelled']
    : ['replayed', 'expired', 'cancelled'];
  const lines = dryRun ? ['dry run: nothing was changed'] : [];
  lines.push(`${replay} ${report.replayed} job(s)${dryRun && report.replayed > 0 ? ':' : ''}`);
  if (dryRun) lines.push(...report.replayedJobs.map((job) => `  ${jobLine(job)}`));
  if (report.expired.length > 0) {
    lines.push(
      `${report.expired.length} job(s) past their deadline ${expire} instead of being replayed (nothing ${dryRun ? 'would be' : 'was'} sent):`,
      ...report.expired.map(notReplayedLine),
    );
  }
  if (report.cancelled.length > 0) {
    lines.push(
      `${report.cancelled.length} confirmation(s) ${cancel} instead of being replayed (their order was refunded):`,
      ...report.cancelled.map(notReplayedLine),
    );
  }
  return `${lines.join('\n')}\n`;
}

async function replay(
  outbox: Outbox,
  values: Values,
  io: CommandIo,
  now: () => number,
  hand: LedgerHand,
): Promise<number> {
  const which = selection(values);
  const dryRun = values['dry-run'];
  const report: ReplayReport = { replayed: 0, replayedJobs: [], expired: [], cancelled: [] };
  let missing: string[] = [];
  if ('all' in which && !dryRun) {
    const total = (await outbox.stats(now())).counts.dead;
    const bar = createProgress(io, 'replaying', total);
    let considered = 0;
    let after: string | undefined;
    // Bounded: each page moves the cursor forward, and the loop ends on a short page.
    for (;;) {
      const page = await outbox.listDead({ limit: REPLAY_PAGE, ...(after === undefined ? {} : { after }) });
      if (page.length === 0) break;
      await replayBatch(
        outbox,
        page.map((job) => job.id),
        now(),
        report,
        hand,
      );
      considered += page.length;
      bar.update(considered);
      after = page.at(-1)?.id;
      if (page.length < REPLAY_PAGE) break;
    }
    bar.finish();
  } else {
    const selected = await selectedJobs(outbox, which, now());
    missing = selected.missing;
    if (dryRun) await replayPlan(outbox, selected.jobs, now(), report);
    else {
      const bar = createProgress(io, 'replaying', selected.jobs.length);
      for (let i = 0; i < selected.jobs.length; i += REPLAY_PAGE) {
        const batch = selected.jobs.slice(i, i + REPLAY_PAGE).map((job) => job.id);
        await replayBatch(outbox, batch, now(), report, hand);
        bar.update(Math.min(i + REPLAY_PAGE, selected.jobs.length));
      }
      bar.finish();
    }
  }
  if (values.json) {
    io.stdout(
      `${jsonText({
        ...(dryRun ? { dryRun: true } : {}),
        replayed: report.replayed,
        ...(dryRun ? { replayedJobs: report.replayedJobs.map(jobView) } : {}),
        expired: report.expired.length,
        expiredJobs: report.expired.map(jobView),
        cancelled: report.cancelled.length,
        cancelledJobs: report.cancelled.map(jobView),
        notDead: missing,
      })}\n`,
    );
  } else {
    io.stdout(replayText(report, dryRun));
    for (const id of missing) io.stderr(text`postback dlq replay: ${id}: no dead job with this id\n`);
  }
  return missing.length > 0 ? EXIT.failed : EXIT.ok;
}

async function purge(
  outbox: Outbox,
  values: Values,
  io: CommandIo,
  now: () => number,
  prompt: Prompt,
  where: string,
  hand: LedgerHand,
): Promise<number> {
  const which = selection(values);
  const dryRun = values['dry-run'];
  const { jobs, missing } = await selectedJobs(outbox, which, now());
  const notDead = () => {
    for (const id of missing) io.stderr(text`postback dlq purge: ${id}: no dead job with this id\n`);
  };
  if (dryRun) {
    if (values.json) {
      io.stdout(
        `${jsonText({ dryRun: true, purged: jobs.length, purgedJobs: jobs.map(jobView), notDead: missing })}\n`,
      );
    } else {
      const head = `dry run: nothing was changed\nwould purge ${jobs.length} dead job(s)${jobs.length > 0 ? ':' : ''}`;
      io.stdout(`${[head, ...jobs.map((job) => `  ${jobLine(job)}`)].join('\n')}\n`);
      notDead();
    }
    return missing.length > 0 ? EXIT.failed : EXIT.ok;
  }
  if (jobs.length > 0 && !values.yes) {
    const answer = await prompt.ask(text`purge ${jobs.length} dead job(s) from ${where} for good? [y/N] `);
    if (!isYes(answer)) {
      io.stderr('postback dlq purge: nothing purged\n');
      return EXIT.failed;
    }
  }
  let purged = 0;
  const at = now();
  if ('all' in which) purged = await outbox.purgeDead();
  else {
    for (let i = 0; i < jobs.length; i += REPLAY_PAGE) {
      purged += await outbox.purgeDead({ ids: jobs.slice(i, i + REPLAY_PAGE).map((job) => job.id) });
    }
  }
  for (const job of jobs) await hand.record('purge', job, at, job.lastError ?? undefined);
  if (values.json) {
    io.stdout(`${jsonText({ purged, notDead: missing })}\n`);
  } else {
    io.stdout(`purged ${purged} dead job(s)\n`);
    notDead();
  }
  return missing.length > 0 ? EXIT.failed : EXIT.ok;
}

/** Checks the combination of action and flags before the backend is opened. */
function checkAction(positionals: string[], values: Values, prompt: Prompt): 'list' | 'replay' | 'purge' {
  const [action, ...extra] = positionals;
  if (action !== 'list' && action !== 'replay' && action !== 'purge') {
    throw new UsageError(
      action === undefined ? 'give an action: list, replay or purge' : `unknown action '${action}'`,
    );
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
  if (action === 'list') {
    const acting = ['id', 'all', 'reason', 'status', 'older-than', 'dry-run', 'yes'] as const;
    accountFilter(values);
    const given = acting.find((flag) => values[flag] !== undefined && values[flag] !== false);
    if (given !== undefined) throw new UsageError(`list takes no --${given}`);
    return action;
  }
  if (values.limit !== undefined || values.after !== undefined) {
    throw new UsageError(`${action} takes no --limit or --after`);
  }
  selection(values);
  if (action === 'replay' && values.yes) throw new UsageError('replay takes no --yes');
  if (action === 'purge' && !values['dry-run'] && !values.yes && !prompt.interactive()) {
    throw new UsageError(
      'purge deletes dead jobs for good: give --yes to confirm (stdin is not a terminal to ask on), ' +
        'or --dry-run to see what would be purged',
    );
  }
  return action;
}

/**
 * Builds the `dlq` command with its dependencies (`prompt`: where `purge` asks for confirmation).
 *
 * @example
 * ```ts
 * await createDlqCommand().run(['replay', '--db', 'postback.db', '--reason', '^Ad service answered 5'], io);
 * ```
 */
export function createDlqCommand(
  ctx: CommandContext = defaultContext,
  prompt: Prompt = stdinPrompt,
): Command {
  return defineCommand(dlqSpec, async ({ values, positionals }, io) => {
    const action = checkAction(positionals, values, prompt);
    // `list` only looks; `replay` and `purge` write (to a file that must exist already).
    const backend = await openFromFlags(ctx, backendFlags(values), io.env, {
      mustExist: true,
      readOnly: action === 'list',
    });
    try {
      if (action === 'list') return await list(backend.outbox, values, io);
      const hand = ledgerHand(backend.outbox, cliActor(values.as, io.env));
      if (action === 'replay') return await replay(backend.outbox, values, io, ctx.now, hand);
      return await purge(backend.outbox, values, io, ctx.now, prompt, backend.describe, hand);
    } finally {
      await backend.outbox.close();
    }
  });
}

export const command: Command = createDlqCommand();

/**
 * `postback dlq list|replay|purge`: the dead-letter queue. Dead jobs keep the reason the service gave;
 * an operator lists them, replays them once the cause is fixed (jobs past their deadline become
 * `expired` instead — nothing is ever sent late), or purges them.
 */
import type { Job, Outbox } from '@postback/core';
import { backendFlags, EXIT, UsageError } from '../args.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import type { ParsedCommand } from '../flags.ts';
import { iso, jobLine, jobView, jsonText, text } from '../format.ts';
import type { CommandIo } from '../io.ts';
import { createProgress } from '../progress.ts';
import { DEFAULT_DLQ_LIMIT, dlqSpec } from '../specs/dlq.ts';

/** Page size of `replay --all`: small enough to show progress, large enough to be quick. */
const REPLAY_PAGE = 200;

type Values = ParsedCommand<typeof dlqSpec.flags>['values'];

function selection(values: Values): { ids: string[] } | { all: true } {
  const ids = values.id ?? [];
  if (values.all && ids.length > 0) throw new UsageError('give either --id ID or --all, not both');
  if (values.all) return { all: true };
  if (ids.length === 0) throw new UsageError('give --id ID (repeatable) or --all');
  return { ids };
}

async function deadIds(
  outbox: Outbox,
  ids: readonly string[],
): Promise<{ dead: string[]; missing: string[] }> {
  const dead: string[] = [];
  const missing: string[] = [];
  for (const id of new Set(ids)) {
    const job = await outbox.get(id);
    (job?.state === 'dead' ? dead : missing).push(id);
  }
  return { dead, missing };
}

async function list(outbox: Outbox, values: Values, io: CommandIo): Promise<number> {
  const limit = values.limit ?? DEFAULT_DLQ_LIMIT;
  // One more than asked tells whether another page follows without a count query.
  const page = await outbox.listDead({
    limit: limit + 1,
    ...(values.after === undefined ? {} : { after: values.after }),
  });
  const jobs = page.slice(0, limit);
  const next = page.length > limit ? (jobs.at(-1)?.id ?? null) : null;
  if (values.json) {
    io.stdout(`${jsonText({ jobs: jobs.map(jobView), next })}\n`);
    return EXIT.ok;
  }
  if (jobs.length === 0) {
    io.stdout('no dead jobs\n');
    return EXIT.ok;
  }
  io.stdout(`${jobs.map(jobLine).join('\n')}\n`);
  if (next !== null) io.stdout(text`more: postback dlq list ... --after ${next}\n`);
  return EXIT.ok;
}

/** What became of the dead jobs a replay was asked for. */
interface ReplayReport {
  replayed: number;
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
async function replayBatch(outbox: Outbox, ids: readonly string[], at: number, report: ReplayReport) {
  const replayed = await outbox.replay({ ids }, at);
  let stayed = 0;
  for (const id of ids) {
    const job = await outbox.get(id);
    if (job?.state === 'expired' && job.deadline !== null && job.deadline <= at) report.expired.push(job);
    else if (job?.state === 'cancelled') report.cancelled.push(job);
    else stayed += 1;
  }
  // The store's count is the truth for how many went back to pending; the rest were read back above.
  report.replayed += Math.min(replayed, stayed);
}

function notReplayedLine(job: Job): string {
  return text`  ${job.id}  ${job.kind.padEnd(7)}  order ${job.orderId}  deadline ${iso(job.deadline) ?? '-'}`;
}

async function replay(outbox: Outbox, values: Values, io: CommandIo, now: () => number): Promise<number> {
  const which = selection(values);
  const report: ReplayReport = { replayed: 0, expired: [], cancelled: [] };
  let missing: string[] = [];
  if ('ids' in which) {
    const found = await deadIds(outbox, which.ids);
    missing = found.missing;
    if (found.dead.length > 0) await replayBatch(outbox, found.dead, now(), report);
  } else {
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
      );
      considered += page.length;
      bar.update(considered);
      after = page.at(-1)?.id;
      if (page.length < REPLAY_PAGE) break;
    }
    bar.finish();
  }
  if (values.json) {
    io.stdout(
      `${jsonText({
        replayed: report.replayed,
        expired: report.expired.length,
        expiredJobs: report.expired.map(jobView),
        cancelled: report.cancelled.length,
        cancelledJobs: report.cancelled.map(jobView),
        notDead: missing,
      })}\n`,
    );
  } else {
    const lines = [`replayed ${report.replayed} job(s)`];
    if (report.expired.length > 0) {
      lines.push(
        `${report.expired.length} job(s) past their deadline expired instead of being replayed (nothing was sent):`,
        ...report.expired.map(notReplayedLine),
      );
    }
    if (report.cancelled.length > 0) {
      lines.push(
        `${report.cancelled.length} confirmation(s) cancelled instead of being replayed (their order was refunded):`,
        ...report.cancelled.map(notReplayedLine),
      );
    }
    io.stdout(`${lines.join('\n')}\n`);
    for (const id of missing) io.stderr(text`postback dlq replay: ${id}: no dead job with this id\n`);
  }
  return missing.length > 0 ? EXIT.failed : EXIT.ok;
}

async function purge(outbox: Outbox, values: Values, io: CommandIo): Promise<number> {
  const which = selection(values);
  let purged: number;
  let missing: string[] = [];
  if ('ids' in which) {
    const found = await deadIds(outbox, which.ids);
    missing = found.missing;
    purged = found.dead.length > 0 ? await outbox.purgeDead({ ids: found.dead }) : 0;
  } else {
    purged = await outbox.purgeDead();
  }
  if (values.json) {
    io.stdout(`${jsonText({ purged, notDead: missing })}\n`);
  } else {
    io.stdout(`purged ${purged} dead job(s)\n`);
    for (const id of missing) io.stderr(text`postback dlq purge: ${id}: no dead job with this id\n`);
  }
  return missing.length > 0 ? EXIT.failed : EXIT.ok;
}

/**
 * Builds the `dlq` command with its dependencies.
 *
 * @example
 * ```ts
 * await createDlqCommand().run(['replay', '--db', 'postback.db', '--all'], io);
 * ```
 */
export function createDlqCommand(ctx: CommandContext = defaultContext): Command {
  return defineCommand(dlqSpec, async ({ values, positionals }, io) => {
    const [action, ...extra] = positionals;
    if (action !== 'list' && action !== 'replay' && action !== 'purge') {
      throw new UsageError(
        action === undefined ? 'give an action: list, replay or purge' : `unknown action '${action}'`,
      );
    }
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
    if (action === 'list' && (values.id !== undefined || values.all))
      throw new UsageError('list takes no --id or --all');
    if (action !== 'list' && (values.limit !== undefined || values.after !== undefined)) {
      throw new UsageError(`${action} takes no --limit or --after`);
    }
    if (action !== 'list') selection(values);
    const backend = await openFromFlags(ctx, backendFlags(values), io.env, { mustExist: true });
    try {
      if (action === 'list') return await list(backend.outbox, values, io);
      if (action === 'replay') return await replay(backend.outbox, values, io, ctx.now);
      return await purge(backend.outbox, values, io);
    } finally {
      await backend.outbox.close();
    }
  });
}

export const command: Command = createDlqCommand();

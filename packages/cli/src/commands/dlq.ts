/**
 * `postback dlq list|replay|purge`: the dead-letter queue. Dead jobs keep the reason the service gave;
 * an operator lists them, replays them once the cause is fixed (jobs past their deadline become
 * `expired` instead — nothing is ever sent late), or purges them.
 */
import type { Outbox } from '@postback/core';
import {
  BACKEND_OPTIONS,
  backendFlags,
  EXIT,
  HELP_OPTION,
  parseFlags,
  positiveInt,
  runGuarded,
  UsageError,
} from '../args.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { jobLine, jobView } from '../format.ts';
import type { CommandIo } from '../io.ts';
import type { Command } from '../main.ts';
import { createProgress } from '../progress.ts';

const HELP = `Usage:
  postback dlq list   (--db FILE | --pg URL | --sqs URL) [--limit N] [--after ID] [--json]
  postback dlq replay (--db FILE | --pg URL | --sqs URL) (--id ID ... | --all) [--json]
  postback dlq purge  (--db FILE | --pg URL | --sqs URL) (--id ID ... | --all) [--json]

list     dead jobs with their reasons, oldest first (--limit default 50; --after continues a page)
replay   put dead jobs back to pending, due now, attempts reset; a job past its deadline becomes
         expired instead. Shows a progress bar on a terminal.
purge    delete dead jobs

--id may be given several times. Exit codes: 0 ok, 1 some --id was not a dead job, 2 usage error,
3 backend unreachable.
`;

/** Page size of `replay --all`: small enough to show progress, large enough to be quick. */
const REPLAY_PAGE = 200;

const OPTIONS = {
  ...BACKEND_OPTIONS,
  ...HELP_OPTION,
  json: { type: 'boolean' },
  limit: { type: 'string' },
  after: { type: 'string' },
  id: { type: 'string', multiple: true },
  all: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseFlags<typeof OPTIONS>>['values'];

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
  const limit = positiveInt('--limit', values.limit, 50);
  // One more than asked tells whether another page follows without a count query.
  const page = await outbox.listDead({
    limit: limit + 1,
    ...(values.after === undefined ? {} : { after: values.after }),
  });
  const jobs = page.slice(0, limit);
  const next = page.length > limit ? (jobs.at(-1)?.id ?? null) : null;
  if (values.json) {
    io.stdout(`${JSON.stringify({ jobs: jobs.map(jobView), next })}\n`);
    return EXIT.ok;
  }
  if (jobs.length === 0) {
    io.stdout('no dead jobs\n');
    return EXIT.ok;
  }
  io.stdout(`${jobs.map(jobLine).join('\n')}\n`);
  if (next !== null) io.stdout(`more: postback dlq list ... --after ${next}\n`);
  return EXIT.ok;
}

async function replay(outbox: Outbox, values: Values, io: CommandIo, now: () => number): Promise<number> {
  const which = selection(values);
  let replayed = 0;
  let considered = 0;
  let missing: string[] = [];
  if ('ids' in which) {
    const found = await deadIds(outbox, which.ids);
    missing = found.missing;
    considered = found.dead.length;
    if (found.dead.length > 0) replayed = await outbox.replay({ ids: found.dead }, now());
  } else {
    const total = (await outbox.stats(now())).counts.dead;
    const bar = createProgress(io, 'replaying', total);
    let after: string | undefined;
    // Bounded: each page moves the cursor forward, and the loop ends on a short page.
    for (;;) {
      const page = await outbox.listDead({ limit: REPLAY_PAGE, ...(after === undefined ? {} : { after }) });
      if (page.length === 0) break;
      replayed += await outbox.replay({ ids: page.map((job) => job.id) }, now());
      considered += page.length;
      bar.update(considered);
      after = page.at(-1)?.id;
      if (page.length < REPLAY_PAGE) break;
    }
    bar.finish();
  }
  const expired = considered - replayed;
  if (values.json) {
    io.stdout(`${JSON.stringify({ replayed, expired, notDead: missing })}\n`);
  } else {
    io.stdout(
      `replayed ${replayed} job(s)${expired > 0 ? `; ${expired} past their deadline became expired` : ''}\n`,
    );
    for (const id of missing) io.stderr(`postback dlq replay: ${id}: no dead job with this id\n`);
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
    io.stdout(`${JSON.stringify({ purged, notDead: missing })}\n`);
  } else {
    io.stdout(`purged ${purged} dead job(s)\n`);
    for (const id of missing) io.stderr(`postback dlq purge: ${id}: no dead job with this id\n`);
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
  return {
    summary: 'List, replay or purge dead jobs',
    run: (args, io) =>
      runGuarded('dlq', io, async () => {
        const { values, positionals } = parseFlags(args, OPTIONS, true);
        if (values.help) {
          io.stdout(HELP);
          return EXIT.ok;
        }
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
      }),
  };
}

export const command: Command = createDlqCommand();

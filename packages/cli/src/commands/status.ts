/**
 * `postback status`: what an operator looks at first — jobs by state, the oldest pending job, the
 * nearest deadline, the open jobs whose deadline is close (at risk), the workers' heart-beats and
 * pauses (of delivery, and of single accounts whose key was refused or is missing), the jobs held for
 * a campaign not on s2s (one line per campaign problem), and the first dead jobs with their reasons. `--fail-on-*` turn conditions into exit codes
 * (`STATUS_EXIT`), so the command is a cron alert.
 */
import { type AccountPause, type HeldProblem, JOB_STATES, type WorkerBeat } from '@postback/core';
import { backendFlags, EXIT, UsageError } from '../args.ts';
import { type QueueStats, queueStats } from '../at-risk.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import type { ParsedCommand } from '../flags.ts';
import { backendName, duration, iso, jobLine, jobView, jsonText, relative, text, when } from '../format.ts';
import { awaitingDecision, type HeldWithSwitch, heldJson, withSwitches } from '../held-view.ts';
import { CAUSE_TEXT, causeOfPause } from '../pause-cause.ts';
import { STATUS_EXIT, statusSpec } from '../specs/status.ts';

type Values = ParsedCommand<typeof statusSpec.flags>['values'];

/** A condition `--fail-on-*` can turn into an exit code, by its name in `--json`'s `alerts`. */
type Alert =
  | 'dead'
  | 'at-risk'
  | 'paused'
  | 'accounts-paused'
  | 'jobs-held'
  | 'held-awaiting-decision'
  | 'no-worker';

const ALERT_EXIT: Readonly<Record<Alert, number>> = {
  dead: STATUS_EXIT.dead,
  'at-risk': STATUS_EXIT.atRisk,
  paused: STATUS_EXIT.paused,
  // The same flag and exit code: delivery stopped for some jobs either way; `alerts` tells which.
  'accounts-paused': STATUS_EXIT.paused,
  // Jobs held for a campaign not on s2s: delivery stopped for them too, until the campaign is switched.
  'jobs-held': STATUS_EXIT.paused,
  // Held orders whose campaign accepts s2s now: they wait for an operator, and their windows run.
  'held-awaiting-decision': STATUS_EXIT.paused,
  'no-worker': STATUS_EXIT.noWorker,
};

/** Whether a worker's latest beat says it is paused (waiting, or sending its one probe). */
function isPaused(beat: WorkerBeat): boolean {
  return beat.state === 'paused' || beat.state === 'probing';
}

/** An account paused by one or more live workers (per-account keys), as `status` shows it. */
interface PausedAccount extends AccountPause {
  /** The workers that report it paused, most recent beat first. */
  workers: string[];
}

/** The paused accounts of a worker's beat (none in a beat of a worker older than per-account keys). */
const pausesOf = (beat: WorkerBeat): readonly AccountPause[] => beat.pausedAccounts ?? [];

/**
 * The accounts paused by the live workers, one entry per account: the reason and status of the most
 * recent beat, the earliest `since` and the latest `until`; oldest pause first.
 */
function pausedAccountsOf(live: readonly WorkerBeat[]): PausedAccount[] {
  const byAccount = new Map<string, PausedAccount>();
  for (const beat of [...live].sort((a, b) => b.at - a.at)) {
    for (const pause of pausesOf(beat)) {
      // `null` (jobs without an account) and every account apart: JSON keeps them distinct.
      const key = JSON.stringify(pause.account);
      const seen = byAccount.get(key);
      if (seen === undefined) {
        byAccount.set(key, { ...pause, workers: [beat.workerId] });
        continue;
      }
      seen.since = Math.min(seen.since, pause.since);
      seen.until = Math.max(seen.until, pause.until);
      seen.workers.push(beat.workerId);
    }
  }
  return [...byAccount.values()].sort((a, b) => a.since - b.since);
}

const accountName = (account: string | null) => (account === null ? '(no account)' : account);

/** The conditions that hold, whether asked for or not (`alerts` in JSON lists only those asked for). */
function conditions(stats: QueueStats, held: HeldWithSwitch[], workers: WorkerBeat[] | null): Alert[] {
  const live = workers?.filter((w) => w.state !== 'stopped') ?? null;
  const found: Alert[] = [];
  if (stats.counts.dead > 0) found.push('dead');
  if (stats.atRisk.count > 0) found.push('at-risk');
  if (live?.some(isPaused)) found.push('paused');
  if (live?.some((beat) => pausesOf(beat).length > 0)) found.push('accounts-paused');
  if (held.length > 0) found.push('jobs-held');
  if (awaitingDecision(held).length > 0) found.push('held-awaiting-decision');
  if (live !== null && live.length === 0) found.push('no-worker');
  return found;
}

function asked(values: Values): Alert[] {
  const flags: Array<[boolean, Alert]> = [
    [values['fail-on-dead'], 'dead'],
    [values['fail-on-at-risk'], 'at-risk'],
    [values['fail-on-paused'], 'paused'],
    [values['fail-on-paused'], 'accounts-paused'],
    [values['fail-on-paused'], 'jobs-held'],
    [values['fail-on-paused'], 'held-awaiting-decision'],
    [values['fail-on-no-worker'], 'no-worker'],
  ];
  return flags.filter(([on]) => on).map(([, alert]) => alert);
}

/** The cause of a worker's pause of all delivery (null when it is not paused). */
function beatCause(beat: WorkerBeat) {
  if (!isPaused(beat)) return null;
  return causeOfPause({ cause: (beat as { pauseCause?: unknown }).pauseCause, reason: beat.pauseReason });
}

/** The cause of an account's pause. */
const accountCause = (pause: AccountPause) =>
  causeOfPause({ cause: (pause as { cause?: unknown }).cause, status: pause.status, reason: pause.reason });

function workerView(beat: WorkerBeat) {
  return {
    workerId: beat.workerId,
    state: beat.state,
    lastSeenAt: iso(beat.at),
    pausedUntil: iso(beat.pausedUntil),
    pauseReason: beat.pauseReason,
    pauseCause: beatCause(beat),
    version: beat.version,
    host: beat.host,
    pid: beat.pid,
    pausedAccounts: pausesOf(beat).map(accountPauseView),
  };
}

function accountPauseView(pause: AccountPause) {
  return {
    account: pause.account,
    status: pause.status,
    cause: accountCause(pause),
    reason: pause.reason,
    since: iso(pause.since),
    until: iso(pause.until),
  };
}

/** What a held problem is about: its campaign (or "a campaign the service did not name") and account. */
function heldSubject(problem: HeldProblem): string {
  const campaign = problem.campaignId === null ? 'a campaign not named by the service' : problem.campaignId;
  return problem.account === null ? campaign : text`${campaign} (account ${problem.account})`;
}

function heldLine(problem: HeldWithSwitch, now: number): string {
  const seen =
    problem.switchSeenAt === null
      ? ''
      : `; switch to s2s seen ${when(problem.switchSeenAt, now)}: awaiting a decision`;
  return text`  ${heldSubject(problem)}: ${problem.count} job(s) worth ${money(problem.valueMicros)} held since ${when(problem.since, now)}${seen}: ${problem.reason}`;
}

/** The held orders awaiting a decision, one part per problem: value at risk and earliest deadline. */
function awaitingLine(held: readonly HeldWithSwitch[]): string {
  const waiting = awaitingDecision(held);
  const value = waiting.reduce((sum, p) => sum + p.valueMicros, 0);
  const each = waiting.map(
    (p) =>
      text`${heldSubject(p)}: ${p.count} worth ${money(p.valueMicros)}, switch seen ${iso(p.switchSeenAt) ?? '-'}, earliest deadline ${iso(p.earliestDeadline) ?? '-'}`,
  );
  return `${waiting.reduce((n, p) => n + p.count, 0)} held order(s) worth ${money(value)} await a decision since their campaign accepts s2s (the pixel may have billed them; undecided, each expires at its deadline): ${each.join('; ')} ('postback held send|drop')`;
}

/** Micros as a decimal amount (the service's currency, which the outbox does not know). */
function money(micros: number): string {
  return (micros / 1_000_000).toFixed(2);
}

function accountLine(pause: PausedAccount, now: number): string {
  const status = pause.status === null ? 'no key' : String(pause.status);
  return text`  ${accountName(pause.account)}  ${status}  ${accountCause(pause)}  since ${when(pause.since, now)}  next probe ${when(pause.until, now)}: ${pause.reason}  (${pause.workers.join(', ')})`;
}

function workerLine(beat: WorkerBeat, now: number): string {
  const pause = isPaused(beat)
    ? text`  paused until ${when(beat.pausedUntil, now)} (${beatCause(beat)}): ${beat.pauseReason ?? 'no reason given'}`
    : '';
  return (
    text`  ${beat.workerId}  ${beat.state}  version ${beat.version}  last seen ${relative(beat.at, now)} (${iso(beat.at)})` +
    pause
  );
}

/** One line per alert that fired, on stderr: what a cron mail shows. */
function alertLine(
  alert: Alert,
  stats: QueueStats,
  held: readonly HeldWithSwitch[],
  seenWithin: number,
  accounts: readonly PausedAccount[],
  live: readonly WorkerBeat[],
): string {
  switch (alert) {
    case 'dead':
      return `${stats.counts.dead} dead job(s)`;
    case 'at-risk':
      return `${stats.atRisk.count} open job(s) with a deadline within ${duration(stats.atRisk.withinMs)}`;
    case 'paused': {
      const paused = live.filter(isPaused);
      const each = paused.map(
        (beat) =>
          text`${beat.workerId} (${CAUSE_TEXT[beatCause(beat) ?? 'unknown']}, until ${iso(beat.pausedUntil) ?? '-'}): ${beat.pauseReason ?? 'no reason given'}`,
      );
      return `delivery is paused by a worker: ${each.join('; ')}`;
    }
    case 'accounts-paused': {
      const each = accounts.map(
        (a) => text`${accountName(a.account)} (${CAUSE_TEXT[accountCause(a)]}, until ${iso(a.until) ?? '-'})`,
      );
      return `${accounts.length} account(s) paused: ${each.join(', ')}`;
    }
    case 'jobs-held':
      return text`${held.reduce((n, p) => n + p.count, 0)} job(s) held: campaign not on s2s: ${held.map(heldSubject).join(', ')} (switch it to s2s, then decide them with 'postback held', unless the worker's onSwitch does)`;
    case 'held-awaiting-decision':
      return awaitingLine(held);
    case 'no-worker':
      return `no worker seen in the last ${duration(seenWithin)}`;
  }
}

/**
 * Builds the `status` command with its dependencies (tests inject an outbox or a clock).
 *
 * @example
 * ```ts
 * await createStatusCommand().run(['--db', 'postback.db', '--json', '--fail-on-at-risk'], io);
 * ```
 */
export function createStatusCommand(ctx: CommandContext = defaultContext): Command {
  return defineCommand(statusSpec, async ({ values }, io) => {
    const seenWithin = values['worker-seen-within'];
    const backend = await openFromFlags(ctx, backendFlags(values), io.env, { readOnly: true });
    try {
      const outbox = backend.outbox;
      const heartbeats = outbox.features.heartbeats;
      const wanted = asked(values);
      if (!heartbeats && (values['fail-on-paused'] || values['fail-on-no-worker'])) {
        throw new UsageError(
          `the ${backendName(values)} backend keeps no worker heart-beats: --fail-on-paused and --fail-on-no-worker cannot be checked`,
        );
      }
      const now = ctx.now();
      // At risk: open jobs whose deadline is still ahead; those past it are lost, counted apart.
      const stats = await queueStats(outbox, now, values['at-risk-within']);
      const dead = stats.counts.dead > 0 ? await outbox.listDead({ limit: values.dead }) : [];
      const workers = heartbeats ? await outbox.workers({ now, sinceMs: seenWithin }) : null;
      const total = JOB_STATES.reduce((sum, state) => sum + stats.counts[state], 0);
      const live = workers?.filter((w) => w.state !== 'stopped') ?? null;
      const paused = live === null ? null : live.some(isPaused);
      const pausedAccounts = live === null ? null : pausedAccountsOf(live);
      // Held problems, with the switch of their campaign when one was seen (null store: SQS keeps none).
      const held = withSwitches(stats.held ?? [], (await outbox.switches?.list()) ?? []);
      const alerts = conditions(stats, held, workers).filter((alert) => wanted.includes(alert));
      // Shadow mode (`postback shadow`): while on, its jobs are recorded and never sent. Null: no shadow mode (SQS).
      const shadow = (await outbox.shadow?.settings())?.map((s) => ({ ...s, since: iso(s.since) })) ?? null;
      if (values.json) {
        io.stdout(
          `${jsonText({
            backend: backend.describe,
            counts: stats.counts,
            total,
            oldestPendingAt: iso(stats.oldestPendingAt),
            nearestDeadline:
              stats.nearestDeadline === null
                ? null
                : { ...stats.nearestDeadline, deadline: iso(stats.nearestDeadline.deadline) },
            atRisk: stats.atRisk,
            pastDeadline: stats.pastDeadline,
            workersSeenWithinMs: seenWithin,
            workers: workers?.map(workerView) ?? null,
            paused,
            pausedAccounts:
              pausedAccounts?.map((p) => ({ ...accountPauseView(p), workers: p.workers })) ?? null,
            held: held.map(heldJson),
            shadow,
            alerts,
            dead: dead.map(jobView),
          })}\n`,
        );
      } else {
        const lines = [text`backend: ${backend.describe}`, `jobs: ${total}`];
        for (const state of JOB_STATES) lines.push(`  ${state.padEnd(10)} ${stats.counts[state]}`);
        lines.push(`oldest pending: ${when(stats.oldestPendingAt, now)}`);
        const nearest = stats.nearestDeadline;
        lines.push(
          `nearest deadline: ${nearest === null ? '-' : text`${when(nearest.deadline, now)}  ${nearest.kind} order ${nearest.orderId} (${nearest.id})`}`,
        );
        const within = duration(stats.atRisk.withinMs);
        lines.push(
          `at risk: ${stats.atRisk.count} open job(s) with a deadline within ${within}` +
            (stats.atRisk.count > 0
              ? ` (see 'postback jobs --state pending,inflight --deadline-within ${within.replace(' ', '')}')`
              : ''),
        );
        if (stats.pastDeadline > 0) {
          lines.push(
            `past deadline: ${stats.pastDeadline} open job(s) whose deadline has passed: never sent, expired at a worker's next claim`,
          );
        }
        if (workers === null) {
          lines.push(`workers: unknown (the ${backendName(values)} backend keeps no worker heart-beats)`);
        } else if (workers.length === 0) {
          lines.push(`workers: no worker seen in the last ${duration(seenWithin)}`);
        } else {
          lines.push(`workers (seen in the last ${duration(seenWithin)}):`);
          for (const beat of workers) lines.push(workerLine(beat, now));
        }
        const pausedCount = live?.filter(isPaused).length ?? 0;
        lines.push(
          `delivery: ${paused === null ? 'unknown' : paused ? `paused (${pausedCount} of ${live?.length} worker(s))` : live?.length === 0 ? 'no worker' : 'not paused'}`,
        );
        if (pausedAccounts !== null && pausedAccounts.length === 0) lines.push('paused accounts: none');
        if (pausedAccounts !== null && pausedAccounts.length > 0) {
          lines.push(`paused accounts (${pausedAccounts.length}; their jobs wait, the others deliver):`);
          for (const pause of pausedAccounts) lines.push(accountLine(pause, now));
        }
        for (const s of shadow ?? [])
          lines.push(
            text`shadow mode: on for ${s.scope === 'all' ? 'the whole outbox' : `account ${s.account ?? '(none)'}`} since ${s.since}: its jobs are recorded, not sent ('postback shadow report', 'postback shadow end')`,
          );
        if (held.length > 0) {
          lines.push(
            `held jobs (${held.length} campaign problem(s); once the campaign accepts s2s they await a decision: 'postback held'):`,
          );
          for (const problem of held) lines.push(heldLine(problem, now));
        }
        if (dead.length > 0) {
          lines.push(`dead jobs (first ${dead.length} of ${stats.counts.dead}; see 'postback dlq list'):`);
          for (const job of dead) lines.push(`  ${jobLine(job)}`);
        }
        io.stdout(`${lines.join('\n')}\n`);
      }
      for (const alert of alerts)
        io.stderr(
          `postback status: alert: ${alertLine(alert, stats, held, seenWithin, pausedAccounts ?? [], live ?? [])}\n`,
        );
      return alerts.reduce<number>((code, alert) => Math.max(code, ALERT_EXIT[alert]), EXIT.ok);
    } finally {
      await backend.outbox.close();
    }
  });
}

export const command: Command = createStatusCommand();

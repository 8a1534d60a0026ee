/**
 * `postback shadow start|report|end`: shadow mode, the migration tool from pixel to s2s. The setting lives
 * in the outbox (`Outbox.shadow`), so running workers see it; the report reads the outbox and the
 * service's spend (`shadow/`); the end decides the recorded orders by core's `decideRecorded`
 * (`send` | `drop`, the vocabulary of `postback held`).
 */
import { createClient } from '@postback/client';
import type { Outbox, OutboxShadow, ShadowScope } from '@postback/core';
import { backendFlags, EXIT, UsageError } from '../args.ts';
import { parseBaseUrl } from '../base-url.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { accountFilter, durationValue, type ParsedCommand, timeValue } from '../flags.ts';
import { jsonText, text } from '../format.ts';
import { readKeysOnce } from '../keys.ts';
import { cliActor, ledgerHand } from '../ledger-hand.ts';
import {
  renderShadowEnd,
  renderShadowReport,
  renderShadowStart,
  shadowEndView,
  shadowStartView,
} from '../shadow/render.ts';
import { accountsOf, loadShadowJobs, type ShadowJobs, shadowReport } from '../shadow/report.ts';
import { takeSpendReadings } from '../shadow/spend.ts';
import { DEFAULT_SHADOW_REPORT_DAYS, shadowSpec } from '../specs/shadow.ts';

type Values = ParsedCommand<typeof shadowSpec.flags>['values'];
type Action = 'start' | 'report' | 'end';

const DAY_MS = 86_400_000;

function checkAction(positionals: string[], values: Values): Action {
  const [action, ...extra] = positionals;
  if (action !== 'start' && action !== 'report' && action !== 'end')
    throw new UsageError(text`give start, report or end (got ${action ?? 'nothing'})`);
  if (extra.length > 0) throw new UsageError(text`unexpected argument: ${extra[0]}`);
  if (values.since !== undefined && action !== 'report') throw new UsageError('--since is for report');
  if (values['send-unbilled-after'] !== undefined && action !== 'end')
    throw new UsageError('--send-unbilled-after is for end');
  return action;
}

/** `--since`: a time, or a duration back from `now`. */
function sinceValue(value: string, now: number): number {
  return /^\d{4}-/.test(value) ? timeValue('since', value) : now - durationValue('since', value);
}

/** The scope of the flags: one account, the jobs without one, or the whole outbox. */
function scopeOf(values: Values): ShadowScope {
  const account = accountFilter(values);
  return account === undefined ? { all: true } : { account };
}

/** The outbox's shadow mode, or a usage error for a backend without it (SQS). */
function shadowOf(outbox: Outbox): OutboxShadow {
  if (outbox.shadow === undefined)
    throw new UsageError('this backend has no shadow mode (SQS): use SQLite or Postgres');
  return outbox.shadow;
}

/**
 * Builds the `shadow` command with its dependencies.
 *
 * @example
 * ```ts
 * await createShadowCommand().run(['start', '--db', 'postback.db'], io);
 * ```
 */
export function createShadowCommand(ctx: CommandContext = defaultContext): Command {
  return defineCommand(shadowSpec, async ({ values, positionals }, io) => {
    const action = checkAction(positionals, values);
    const scope = scopeOf(values);
    const from = values['send-unbilled-after'];
    const sendCreatedFrom = from === undefined ? null : timeValue('send-unbilled-after', from);
    const sinceGiven = values.since === undefined ? undefined : sinceValue(values.since, ctx.now());
    const backend = await openFromFlags(ctx, backendFlags(values), io.env, { mustExist: action !== 'start' });
    const keys = action === 'end' ? null : await readKeysOnce(values['keys-file'], io.env);
    const baseUrl = values['base-url'];
    const client =
      baseUrl === undefined || keys === null ? null : createClient({ baseUrl: parseBaseUrl(baseUrl) });
    try {
      const outbox = backend.outbox;
      const shadow = shadowOf(outbox);
      const now = ctx.now();
      const account = 'all' in scope ? undefined : scope.account;
      /** Reads the spend of the scope's account, or of every account of `jobs` and the default key's. */
      const spend = async (jobs: ShadowJobs) => {
        if (client === null || keys === null) return ['no --base-url: the spend is not read'];
        const accounts = new Set<string | null>(account === undefined ? accountsOf(jobs) : [account]);
        if (account === undefined && keys.keyFor(null) !== undefined) accounts.add(null);
        return (await takeSpendReadings(shadow, { client, keyFor: keys.keyFor }, accounts, ctx.now)).notes;
      };
      if (action === 'start') {
        const setting = await shadow.start(scope, now);
        const recent = await loadShadowJobs(outbox, now - DEFAULT_SHADOW_REPORT_DAYS * DAY_MS, account);
        const notes = await spend(recent);
        const shown = shadowStartView(setting, notes);
        io.stdout(values.json ? `${jsonText(shown)}\n` : renderShadowStart(shown));
        return EXIT.ok;
      }
      if (action === 'report') {
        const settings = await shadow.settings();
        const since = sinceGiven ?? settings[0]?.since ?? now - DEFAULT_SHADOW_REPORT_DAYS * DAY_MS;
        const jobs = await loadShadowJobs(outbox, since, account);
        const notes = await spend(jobs);
        const report = await shadowReport(shadow, jobs, { since, now: ctx.now(), account, notes });
        io.stdout(keys?.redact(values.json ? `${jsonText(report)}\n` : renderShadowReport(report)) ?? '');
        return EXIT.ok;
      }
      const result = await shadow.end(scope, { now, sendCreatedFrom });
      // One `shadow-end` row per decided job in the ledger (where the store keeps one), naming the operator.
      const hand = ledgerHand(outbox, cliActor(values.as, io.env));
      for (const { decision, job } of result.decided)
        await hand.record('shadow-end', job, now, `${decision}: ${job.lastError ?? job.state}`);
      io.stdout(
        values.json
          ? `${jsonText(shadowEndView(result, sendCreatedFrom))}\n`
          : renderShadowEnd(result, sendCreatedFrom),
      );
      return EXIT.ok;
    } finally {
      await client?.close();
      await backend.outbox.close();
    }
  });
}

export const command: Command = createShadowCommand();

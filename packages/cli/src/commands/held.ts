/**
 * `postback held [send|drop]`: the orders held for a campaign not on s2s. The list is the outbox's held
 * problems with the switch of each campaign when one was seen (`Outbox.switches`) and the campaign's spend
 * (readings kept in the outbox: at the hold, at the switch, now); `send` and `drop` decide one problem in
 * one transaction (`OutboxSwitches.decide`) and write a ledger row per order naming who decided.
 */
import { createClient } from '@postback/client';
import type { Outbox } from '@postback/core';
import { type OutboxSwitches, validateCampaignId } from '@postback/core/store';
import { backendFlags, EXIT, UsageError } from '../args.ts';
import { parseBaseUrl } from '../base-url.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { accountFilter, type ParsedCommand, timeValue } from '../flags.ts';
import { iso, jsonText, text, when } from '../format.ts';
import { type HeldWithSwitch, heldJson, type SpendAt, spendNear, withSwitches } from '../held-view.ts';
import { readKeysOnce } from '../keys.ts';
import { cliActor, ledgerHand } from '../ledger-hand.ts';
import { takeSpendReadings } from '../shadow/spend.ts';
import { heldSpec } from '../specs/held.ts';

type Values = ParsedCommand<typeof heldSpec.flags>['values'];
type Action = 'list' | 'send' | 'drop';

/** How far before the oldest hold the spend readings are looked up. */
const SPEND_LOOKBACK_MS = 86_400_000;

function checkAction(positionals: string[], values: Values): Action {
  const [given, ...extra] = positionals;
  const action = given ?? 'list';
  if (action !== 'list' && action !== 'send' && action !== 'drop')
    throw new UsageError(text`give list, send or drop (got ${action})`);
  if (extra.length > 0) throw new UsageError(text`unexpected argument: ${extra[0]}`);
  if (action === 'list' && (values.campaign !== undefined || values['created-before'] !== undefined))
    throw new UsageError('--campaign and --created-before are for send and drop');
  if (action !== 'list' && values['base-url'] !== undefined) throw new UsageError('--base-url is for list');
  return action;
}

/** `--campaign`: `cmp_…`, or `none` for orders held without a named campaign. */
function campaignOf(value: string | undefined): string | null {
  if (value === undefined)
    throw new UsageError('give --campaign CMP (or none): the campaign whose orders to decide');
  if (value === 'none') return null;
  try {
    return validateCampaignId(value, 'campaign');
  } catch {
    throw new UsageError(text`--campaign must be cmp_<id> or none, got ${value}`);
  }
}

function switchesOf(outbox: Outbox): OutboxSwitches {
  if (outbox.switches === undefined)
    throw new UsageError(
      'this backend keeps no held decisions (SQS): set the worker option onSwitch instead',
    );
  return outbox.switches;
}

/** Micros as a decimal amount (the service's currency, which the outbox does not know). */
const money = (micros: number | null | undefined) => (micros == null ? '-' : (micros / 1_000_000).toFixed(2));

function problemLine(p: HeldListed, now: number): string {
  const subject = `${p.campaignId ?? 'none'}${p.account === null ? '' : text` (account ${p.account})`}`;
  const decision =
    p.switchSeenAt === null
      ? 'campaign not yet seen on s2s'
      : `switch seen ${when(p.switchSeenAt, now)}: AWAITING A DECISION ('postback held send|drop --campaign ${p.campaignId ?? 'none'}')`;
  const spend =
    p.spend === null
      ? ''
      : `\n    spend: at the hold ${money(p.spend.atHold?.spendMicros)}, at the switch ${money(p.spend.atSwitch?.spendMicros)}, now ${money(p.spend.now?.spendMicros)}`;
  return (
    text`  ${subject}: ${p.count} order(s) worth ${money(p.valueMicros)} held since ${when(p.since, now)}, earliest deadline ${when(p.earliestDeadline, now)}; ` +
    decision +
    spend
  );
}

/** A listed problem: with its campaign's spend when readings were taken (null: no --base-url). */
interface HeldListed extends HeldWithSwitch {
  spend: { atHold: SpendAt | null; atSwitch: SpendAt | null; now: SpendAt | null } | null;
}

const spendJson = (s: SpendAt | null) => (s === null ? null : { at: iso(s.at), spendMicros: s.spendMicros });

/**
 * Builds the `held` command with its dependencies.
 *
 * @example
 * ```ts
 * await createHeldCommand().run(['drop', '--db', 'postback.db', '--account', 'shop-7', '--campaign', 'cmp_9'], io);
 * ```
 */
export function createHeldCommand(ctx: CommandContext = defaultContext): Command {
  return defineCommand(heldSpec, async ({ values, positionals }, io) => {
    const action = checkAction(positionals, values);
    const account = accountFilter(values);
    const campaignId = action === 'list' ? null : campaignOf(values.campaign);
    if (action !== 'list' && account === undefined)
      throw new UsageError('give --account ID (or --no-account): the account whose orders to decide');
    const before = values['created-before'];
    const createdBefore = before === undefined ? null : timeValue('created-before', before);
    const backend = await openFromFlags(ctx, backendFlags(values), io.env, { mustExist: true });
    const keys =
      action === 'list' && values['base-url'] !== undefined
        ? await readKeysOnce(values['keys-file'], io.env)
        : null;
    const client =
      keys === null ? null : createClient({ baseUrl: parseBaseUrl(values['base-url'] as string) });
    try {
      const outbox = backend.outbox;
      const switches = switchesOf(outbox);
      const now = ctx.now();
      if (action === 'list') {
        const stats = await outbox.stats(now);
        const held = withSwitches(stats.held ?? [], await switches.list()).filter(
          (p) => account === undefined || p.account === account,
        );
        const notes: string[] = [];
        let readings: Awaited<ReturnType<NonNullable<Outbox['shadow']>['spend']>> | null = null;
        if (client !== null && keys !== null && outbox.shadow !== undefined && held.length > 0) {
          const accounts = new Set(held.map((p) => p.account));
          const taken = await takeSpendReadings(
            outbox.shadow,
            { client, keyFor: keys.keyFor },
            accounts,
            ctx.now,
          );
          notes.push(...taken.notes);
          const since = Math.min(...held.map((p) => p.since)) - SPEND_LOOKBACK_MS;
          readings = await outbox.shadow.spend({ since });
        } else if (held.length > 0) notes.push('no --base-url: the spend is not read');
        const listed: HeldListed[] = held.map((p) => ({
          ...p,
          spend:
            readings === null
              ? null
              : {
                  atHold: spendNear(readings, p, p.since),
                  atSwitch: p.switchSeenAt === null ? null : spendNear(readings, p, p.switchSeenAt),
                  now: spendNear(readings, p, ctx.now()),
                },
        }));
        if (values.json) {
          const problems = listed.map((p) => ({
            ...heldJson(p),
            spend:
              p.spend === null
                ? null
                : {
                    atHold: spendJson(p.spend.atHold),
                    atSwitch: spendJson(p.spend.atSwitch),
                    now: spendJson(p.spend.now),
                  },
          }));
          io.stdout(
            keys?.redact(`${jsonText({ problems, notes })}\n`) ?? `${jsonText({ problems, notes })}\n`,
          );
          return EXIT.ok;
        }
        const lines =
          listed.length === 0
            ? ['held: none']
            : [`held (${listed.length} problem(s)):`, ...listed.map((p) => problemLine(p, now))];
        for (const note of notes) lines.push(`note: ${note}`);
        io.stdout(`${lines.join('\n')}\n`);
        return EXIT.ok;
      }
      const decided = await switches.decide({
        account: account ?? null,
        campaignId,
        decision: action,
        now,
        createdBefore,
      });
      const hand = ledgerHand(outbox, cliActor(values.as, io.env));
      for (const { decision, job } of decided)
        await hand.record(
          decision === 'send' ? 'held-send' : 'held-drop',
          job,
          now,
          `${decision}: ${job.lastError ?? job.state}`,
        );
      const count = (state: string) => decided.filter((d) => d.job.state === state).length;
      if (values.json) {
        io.stdout(
          `${jsonText({
            decision: action,
            account: account ?? null,
            campaignId,
            decided: decided.map(({ decision, job }) => ({
              decision,
              jobId: job.id,
              orderId: job.orderId,
              kind: job.kind,
              state: job.state,
              reason: job.lastError,
            })),
          })}\n`,
        );
        return EXIT.ok;
      }
      io.stdout(
        decided.length === 0
          ? 'held: no pending held order matched (see postback held)\n'
          : `held ${action}: ${decided.length} order(s): ${count('pending')} due now, ${count('cancelled')} dropped, ${count('expired')} expired (past their deadline, not sent)\n`,
      );
      return EXIT.ok;
    } finally {
      await client?.close();
      await backend.outbox.close();
    }
  });
}

export const command: Command = createHeldCommand();

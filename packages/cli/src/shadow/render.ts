/**
 * How `postback shadow` prints: the report as one table per account (money in the currency's units, six
 * decimals, from micros), and the end of shadow mode as counts by outcome with its JSON view.
 */
import type { ShadowEndResult, ShadowSetting } from '@postback/core/store';
import { iso, type JobView, jobView, printable } from '../format.ts';
import type { ShadowReport } from './report.ts';

/** Micros as units with six decimals (exact: integer arithmetic). */
function units(micros: number | null): string {
  if (micros === null) return '—';
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  return `${sign}${Math.floor(abs / 1_000_000)}.${String(abs % 1_000_000).padStart(6, '0')}`;
}

/** The JSON view of `shadow start`: the setting (its time in ISO 8601) and the notes of its spend reading. */
export function shadowStartView(setting: ShadowSetting, notes: string[]) {
  return { scope: setting.scope, account: setting.account, since: iso(setting.since) as string, notes };
}

/** `shadow start` as text. */
export function renderShadowStart(view: ReturnType<typeof shadowStartView>): string {
  const what = view.scope === 'all' ? 'the whole outbox' : `account ${printable(view.account ?? '(none)')}`;
  return `shadow mode on for ${what} since ${view.since}\n${view.notes.map((n) => `note: ${printable(n)}\n`).join('')}`;
}

/** The report as text: settings, then per account a row per day. */
export function renderShadowReport(report: ShadowReport): string {
  const lines: string[] = [];
  if (report.settings.length === 0) lines.push('shadow mode is off');
  for (const s of report.settings)
    lines.push(
      `shadow mode on for ${s.scope === 'all' ? 'the whole outbox' : `account ${printable(s.account ?? '(none)')}`} since ${s.since}`,
    );
  const header = [
    'day',
    'orders',
    'value',
    'recorded',
    'would send',
    'reversals',
    'dropped',
    'delivered',
    'spend',
  ];
  let account: string | null | undefined;
  let first = true;
  for (const d of report.days) {
    if (first || d.account !== account) {
      first = false;
      account = d.account;
      lines.push('', `account ${printable(account ?? '(none)')}`, header.join('\t'));
    }
    lines.push(
      [
        d.day,
        d.orders,
        units(d.orders_value_micros),
        d.recorded,
        units(d.recorded_value_micros),
        d.recorded_reversals,
        d.dropped,
        d.delivered,
        units(d.spend_micros),
      ].join('\t'),
    );
  }
  for (const note of report.notes) lines.push(`note: ${printable(note)}`);
  return `${lines.join('\n')}\n`;
}

/** The JSON view of the end of shadow mode: counts, and each decided job (its stable view). */
export function shadowEndView(result: ShadowEndResult, sendCreatedFrom: number | null) {
  const count = (state: string) => result.decided.filter((d) => d.job.state === state).length;
  return {
    ended: result.ended,
    sendCreatedFrom: iso(sendCreatedFrom),
    sent: count('pending'),
    dropped: result.decided.filter((d) => d.decision === 'drop').length,
    expired: count('expired'),
    cancelled: result.decided.filter((d) => d.decision === 'send' && d.job.state === 'cancelled').length,
    decided: result.decided.map((d): { decision: string; job: JobView } => ({
      decision: d.decision,
      job: jobView(d.job),
    })),
  };
}

/** The end of shadow mode as text. */
export function renderShadowEnd(result: ShadowEndResult, sendCreatedFrom: number | null): string {
  const view = shadowEndView(result, sendCreatedFrom);
  if (!view.ended && view.decided.length === 0)
    return 'shadow mode was not on for this scope: nothing to do\n';
  return (
    `shadow mode ended; of ${view.decided.length} recorded job(s): ${view.sent} to be sent, ` +
    `${view.dropped} dropped (billed by the pixel), ${view.expired} expired, ${view.cancelled} cancelled (refunded)\n`
  );
}

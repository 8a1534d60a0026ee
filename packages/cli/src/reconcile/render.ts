/**
 * `postback reconcile` as text: one table, a row per campaign and the `unattributed` row last, the
 * outbox's figures beside the service's, then the reversals in other states, the confirmations never
 * sent, the notes and the flags. Money as decimals through the client's exact `formatMicros`, and only
 * there; every field from outside is made printable.
 */
import { formatMicros } from '@postback/client';
import { duration, text } from '../format.ts';
import type { CampaignRow, OutboxFigures, ReconcileReport, Tally } from './types.ts';

const money = (micros: number | null) => (micros === null ? '-' : formatMicros(micros));
const tally = (t: Tally) => (t.count === 0 ? '0' : `${t.count} (${formatMicros(t.value_micros)})`);

const HEADER = [
  'CAMPAIGN',
  'ACCOUNT',
  'STATUS',
  'BID',
  'BUDGET',
  'SPEND',
  'DELIVERED',
  'MAYBE APPLIED',
  'REVERSED',
  'REVERSAL PENDING',
  'FILTERED CLICKS',
];

function outboxCells(figures: OutboxFigures): string[] {
  return [
    tally(figures.delivered),
    tally(figures.maybe_applied),
    tally(figures.reversed),
    tally(figures.reversal_pending),
  ];
}

function rowCells(row: CampaignRow): string[] {
  const service = row.service;
  const clicks = row.filtered_clicks;
  return [
    text`${row.campaign_id}`,
    row.account === null ? '-' : text`${row.account}`,
    service === null ? '?' : text`${service.status ?? '-'}`,
    service === null ? '?' : money(service.bid_micros),
    service === null ? '?' : money(service.budget_micros),
    service === null ? '?' : money(service.spend_micros),
    ...outboxCells(row),
    clicks === null
      ? '?'
      : `${clicks.count} (${formatMicros(clicks.amount_micros)})${clicks.matched_orders > 0 ? `, ${clicks.matched_orders} ours` : ''}`,
  ];
}

/** Columns padded to their widest cell. */
function table(rows: string[][]): string[] {
  const widths = HEADER.map((_, i) => Math.max(...rows.map((cells) => (cells[i] ?? '').length)));
  return rows.map((cells) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}

/** Reversals in other states, by state, for one row's label. */
function others(label: string, figures: OutboxFigures): string[] {
  return Object.entries(figures.reversals_other).map(
    ([state, t]) => text`  ${label}: ${tally(t)} reversal(s) ${state}`,
  );
}

/**
 * The report as text.
 *
 * @example
 * ```ts
 * io.stdout(renderReconcile(report));
 * ```
 */
export function renderReconcile(report: ReconcileReport): string {
  const lines: string[] = [];
  lines.push(
    `orders ${report.since === null ? 'of every date' : `created since ${report.since}`}; ` +
      `return window ${report.return_window_ms === null ? 'open-ended (none configured)' : duration(report.return_window_ms)}` +
      '; counts (value); ? = not read from the service',
  );
  const u = report.unattributed;
  lines.push(
    ...table([
      HEADER,
      ...report.campaigns.map(rowCells),
      ['unattributed', '-', '-', '-', '-', '-', ...outboxCells(u), '-'],
    ]),
  );
  const extra = [
    ...report.campaigns.flatMap((row) => others(row.campaign_id, row)),
    ...others('unattributed', u),
  ];
  if (extra.length > 0) lines.push('other reversals:', ...extra);
  if (u.orders.length > 0) {
    const listed = u.orders.map(
      (o) => text`${o.order_id}${o.account === null ? '' : `@${o.account}`} (${o.state})`,
    );
    lines.push(`unattributed orders: ${listed.join(', ')}${u.more > 0 ? ` and ${u.more} more` : ''}`);
  }
  const notSent = Object.entries(report.not_sent).map(([state, t]) => `${tally(t)} ${state}`);
  if (notSent.length > 0) lines.push(`confirmations never sent: ${notSent.join(', ')}`);
  for (const note of report.notes) lines.push(text`note: ${note}`);
  if (report.flags.length === 0) {
    lines.push('flags: none');
  } else {
    lines.push(`flags (${report.flags.length}; each needs a person):`);
    for (const f of report.flags) {
      const order =
        f.account === null ? text`order ${f.order_id}` : text`order ${f.order_id} of account ${f.account}`;
      lines.push(
        text`  ${f.kind}  ${order}${f.campaign_id === null ? '' : ` in ${f.campaign_id}`} (job ${f.job_id}): ${f.detail}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

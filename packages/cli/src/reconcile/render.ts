/**
 * `postback reconcile` as text: one table, a row per campaign and the `unattributed` row last, the
 * outbox's figures beside the service's, then the reversals in other states, the confirmations never
 * sent, the notes and the flags. Money as decimals through the client's exact `formatMicros`, and only
 * there; every field from outside is made printable. Written line by line for any number of campaigns:
 * every cell is cut to {@link RECONCILE_CELL_WIDTH} characters, the column widths are found in one pass
 * over the rows (no spread of a row list into arguments), and each line is handed on as it is made, so
 * no string ever holds the whole table.
 */
import { formatMicros } from '@postback/client';
import { columnWidths, cut, duration, text } from '../format.ts';
import type { CampaignRow, OutboxFigures, ReconcileReport, Tally } from './types.ts';

/**
 * Widest a cell of the text table is: a longer value (a service's runaway status, a long account name)
 * is cut there, its last character an ellipsis. `--json` has every value whole.
 * @defaultValue 48
 */
export const RECONCILE_CELL_WIDTH = 48;

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

/** One campaign's cells, each printable and cut to the cell width. */
function rowCells(row: CampaignRow): string[] {
  const service = row.service;
  const clicks = row.filtered_clicks;
  return [
    row.campaign_id,
    row.account === null ? '-' : row.account,
    service === null ? '?' : (service.status ?? '-'),
    service === null ? '?' : money(service.bid_micros),
    service === null ? '?' : money(service.budget_micros),
    service === null ? '?' : money(service.spend_micros),
    ...outboxCells(row),
    clicks === null
      ? '?'
      : `${clicks.count} (${formatMicros(clicks.amount_micros)})${clicks.matched_orders > 0 ? `, ${clicks.matched_orders} ours` : ''}`,
  ].map((cell) => cut(cell, RECONCILE_CELL_WIDTH));
}

/** The table's rows, header first and the `unattributed` row last, each made when it is asked for. */
function* tableRows(report: ReconcileReport): Generator<string[]> {
  yield HEADER;
  for (const row of report.campaigns) yield rowCells(row);
  yield ['unattributed', '-', '-', '-', '-', '-', ...outboxCells(report.unattributed), '-'];
}

/** Reversals in other states, by state, for one row's label. */
function others(label: string, figures: OutboxFigures): string[] {
  return Object.entries(figures.reversals_other).map(
    ([state, t]) => text`  ${cut(label, RECONCILE_CELL_WIDTH)}: ${tally(t)} reversal(s) ${state}`,
  );
}

/** Each campaign's figures, then the unattributed row's, with the label their other reversals show. */
function* labelledFigures(report: ReconcileReport): Generator<[string, OutboxFigures]> {
  for (const row of report.campaigns) yield [row.campaign_id, row];
  yield ['unattributed', report.unattributed];
}

/**
 * Writes the report as text, one line at a time (each with its newline), to `writeLine`.
 *
 * @example
 * ```ts
 * writeReconcile(report, (line) => io.stdout(line));
 * ```
 */
export function writeReconcile(report: ReconcileReport, writeLine: (line: string) => void): void {
  const line = (value: string) => writeLine(`${value}\n`);
  line(
    `orders ${report.since === null ? 'of every date' : `created since ${report.since}`}; ` +
      `return window ${report.return_window_ms === null ? 'open-ended (none configured)' : duration(report.return_window_ms)}` +
      '; counts (value); ? = not read from the service',
  );
  // Two passes over the rows, each row made afresh: the first for the widths, the second to write.
  const widths = columnWidths(tableRows(report), HEADER.length);
  for (const cells of tableRows(report))
    line(
      cells
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    );
  let titled = false;
  for (const [label, figures] of labelledFigures(report)) {
    for (const extra of others(label, figures)) {
      if (!titled) line('other reversals:');
      titled = true;
      line(extra);
    }
  }
  const u = report.unattributed;
  if (u.orders.length > 0) {
    const listed = u.orders.map(
      (o) =>
        text`${o.order_id}${o.account === null ? '' : `@${o.account}`} (${o.state}${o.decided_by === null ? '' : `, decided by ${o.decided_by}`})`,
    );
    line(`unattributed orders: ${listed.join(', ')}${u.more > 0 ? ` and ${u.more} more` : ''}`);
  }
  const notSent = Object.entries(report.not_sent).map(([state, t]) => `${tally(t)} ${state}`);
  if (notSent.length > 0) line(`confirmations never sent: ${notSent.join(', ')}`);
  for (const note of report.notes) line(text`note: ${note}`);
  if (report.flags.length === 0) {
    line('flags: none');
  } else {
    line(`flags (${report.flags.length}; each needs a person):`);
    for (const f of report.flags) {
      const order =
        f.account === null ? text`order ${f.order_id}` : text`order ${f.order_id} of account ${f.account}`;
      line(
        text`  ${f.kind}  ${order}${f.campaign_id === null ? '' : ` in ${f.campaign_id}`} (job ${f.job_id}${f.decided_by === null ? '' : `, decided by ${f.decided_by}`}): ${f.detail}`,
      );
    }
  }
}

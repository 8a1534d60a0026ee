/**
 * `postback reconcile`'s text for a platform's numbers: 200,000 campaign rows print (no spread of the rows
 * into `Math.max`, which overflowed the stack past ~125,000), a runaway cell is cut to the cell width with
 * an ellipsis (one 300,000-character status in 2,000 rows padded every row to its width: "Invalid string
 * length"), and the table is handed on line by line. Bounded generated reports, rendered as the command
 * renders them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunked, columnWidths } from '../src/format.ts';
import { RECONCILE_CELL_WIDTH, writeReconcile } from '../src/reconcile/render.ts';
import { type CampaignRow, emptyFigures, type ReconcileReport } from '../src/reconcile/types.ts';

/** A report of `rows` campaigns (row `i` delivered `i % 7` orders), `status(i)` as each one's status. */
function report(rows: number, status: (i: number) => string): ReconcileReport {
  const campaigns: CampaignRow[] = [];
  for (let i = 0; i < rows; i++) {
    campaigns.push({
      ...emptyFigures(),
      delivered: { count: i % 7, value_micros: (i % 7) * 1_000_000 },
      campaign_id: `cmp_${i}`,
      account: i % 2 === 0 ? null : `shop-${i % 13}`,
      service: {
        status: status(i),
        bid_micros: 1_500_000,
        budget_micros: 100_000_000,
        spend_micros: i,
        conversion_source: 's2s',
      },
      filtered_clicks: null,
    });
  }
  return {
    since: null,
    return_window_ms: null,
    campaigns,
    unattributed: { ...emptyFigures(), orders: [], more: 0 },
    not_sent: {},
    flags: [],
    notes: [],
  };
}

/** The lines `writeReconcile` hands on, and how many pieces it handed. */
function render(r: ReconcileReport): { lines: string[]; pieces: number } {
  const lines: string[] = [];
  writeReconcile(r, (line) => lines.push(line));
  return { lines, pieces: lines.length };
}

describe('reconcile as text', () => {
  it('prints 200,000 campaign rows, one line each, in one table', () => {
    const { lines } = render(report(200_000, () => 'active'));
    // The title, the header, a row per campaign, the unattributed row, "flags: none".
    expect(lines).toHaveLength(1 + 1 + 200_000 + 1 + 1);
    expect(lines.every((line) => line.endsWith('\n') && line.indexOf('\n') === line.length - 1)).toBe(true);
    expect(lines[1]).toMatch(/^CAMPAIGN {2,}ACCOUNT {2,}STATUS/);
    expect(lines[2]).toMatch(/^cmp_0 {2,}- {2,}active {2,}1\.50 {2,}100\.00 /);
    expect(lines[200_001]).toMatch(/^cmp_199999 {2,}shop-/);
    expect(lines.at(-2)).toMatch(/^unattributed /);
    // Every row's STATUS column starts where the header's does: the widths hold for all 200,000.
    const statusAt = (lines[1] as string).indexOf('STATUS');
    expect(lines.slice(2, -2).every((line) => line.indexOf('active') === statusAt)).toBe(true);
  }, 60_000);

  it('cuts a 300,000-character status to the cell width with an ellipsis, in 2,000 rows', () => {
    const runaway = `suspended:${'x'.repeat(300_000)}`;
    const { lines } = render(report(2_000, (i) => (i === 1_234 ? runaway : 'active')));
    const row = lines.find((line) => line.startsWith('cmp_1234 ')) as string;
    const cell = `${runaway.slice(0, RECONCILE_CELL_WIDTH - 1)}…`;
    expect(row).toContain(cell);
    expect(row).not.toContain(runaway.slice(0, RECONCILE_CELL_WIDTH));
    // No line is wider than eleven cut cells and their gaps.
    const widest = 11 * RECONCILE_CELL_WIDTH + 10 * 2;
    expect(Math.max(...lines.slice(1, 10).map((line) => line.length))).toBeLessThanOrEqual(widest + 1);
    expect(lines.reduce((n, line) => Math.max(n, line.length), 0)).toBeLessThanOrEqual(widest + 1);
  });

  it('shows a cell holding a line break or an escape on its one line, cut after escaping', () => {
    const { lines } = render(report(2, (i) => (i === 0 ? 'paused\n| cmp_9 | active\u001b[2J' : 'active')));
    const row = lines.find((line) => line.startsWith('cmp_0 ')) as string;
    expect(row).toContain('paused\\u{a}| cmp_9 | active\\u{1b}[2J');
    expect(row.indexOf('\n')).toBe(row.length - 1);
  });
});

describe('columnWidths', () => {
  it('is each column’s longest cell, for rows of any number and any length', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.string(), { maxLength: 5 }), { maxLength: 40 }),
        fc.nat(6),
        (rows, n) => {
          const naive = [...Array(n).keys()].map((i) =>
            rows.reduce((w, row) => Math.max(w, (row[i] ?? '').length), 0),
          );
          expect(columnWidths(rows, n)).toEqual(naive);
        },
      ),
    );
  });
});

describe('chunked', () => {
  it('hands on every piece, in order, in chunks of whole pieces', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 40_000 }), { maxLength: 30 }), (pieces) => {
        const written: string[] = [];
        const out = chunked((text) => written.push(text));
        for (const piece of pieces) out.write(piece);
        out.flush();
        expect(written.join('')).toBe(pieces.join(''));
        expect(written.every((chunk) => chunk.length > 0)).toBe(true);
      }),
    );
  });

  it('names who decided a flagged or unattributed order, from the ledger, and nothing when none did', () => {
    const r = report(1, () => 'active');
    r.flags = [
      {
        kind: 'reversal-dead',
        order_id: 'h1',
        account: 'shop-2',
        campaign_id: 'cmp_1',
        job_id: '9',
        detail: 'the reversal is dead',
        decided_by: 'ana',
      },
      {
        kind: 'reversal-dead',
        order_id: 'h2',
        account: null,
        campaign_id: null,
        job_id: '10',
        detail: 'the reversal is dead',
        decided_by: null,
      },
    ];
    r.unattributed.orders = [
      {
        order_id: 'u1',
        account: null,
        state: 'cancelled',
        value_micros: 1_000_000,
        decided_by: 'option onSwitch',
      },
    ];
    const { lines } = render(r);
    expect(lines.find((l) => l.includes('h1'))).toContain('(job 9, decided by ana): the reversal is dead');
    expect(lines.find((l) => l.includes('h2'))).toContain('(job 10): the reversal is dead');
    expect(lines.find((l) => l.startsWith('unattributed orders'))).toContain(
      'u1 (cancelled, decided by option onSwitch)',
    );
  });
});

/**
 * `postback ledger`: reads the ledger of every hand on the money (operator actions and final money
 * states), filtered by time, order and account, as a table or as JSON.
 */
import type { LedgerEntry, LedgerQuery } from '@postback/core/store';
import { backendFlags, EXIT, UsageError, validationProblem } from '../args.ts';
import { type Command, defineCommand } from '../command.ts';
import { type CommandContext, defaultContext, openFromFlags } from '../context.ts';
import { durationValue } from '../flags.ts';
import { columnWidths, iso, jsonText, text } from '../format.ts';
import { ledgerSpec } from '../specs/ledger.ts';

/** One row of `postback ledger --json`: the stored row, its time as ISO 8601. */
export interface LedgerRowView {
  seq: number;
  at: string;
  actor: string;
  kind: LedgerEntry['kind'];
  jobId: string | null;
  orderId: string;
  account: string | null;
  valueMicros: number | null;
  reason: string | null;
}

function view(row: LedgerEntry): LedgerRowView {
  return { ...row, at: iso(row.at) as string };
}

function sinceOf(value: string, now: number): number {
  if (!/^\d{4}-/.test(value)) return now - durationValue('since', value);
  const at = Date.parse(value);
  if (!Number.isFinite(at))
    throw new UsageError(
      text`--since must be an ISO 8601 time (2026-11-03T00:00:00Z) or a duration, got ${value}`,
    );
  return at;
}

function table(rows: readonly LedgerRowView[]): string {
  if (rows.length === 0) return 'no ledger rows\n';
  const cells = rows.map((r) => [
    r.at,
    r.kind,
    r.actor,
    r.account === null ? r.orderId : `${r.account}/${r.orderId}`,
    r.valueMicros === null ? '-' : String(r.valueMicros),
    r.jobId ?? '-',
    r.reason ?? '',
  ]);
  const head = ['AT', 'KIND', 'WHO', 'ORDER', 'VALUE_MICROS', 'JOB', 'REASON'];
  const widths = columnWidths([head, ...cells], head.length - 1);
  const line = (row: readonly string[]) =>
    text`${row.map((cell, i) => (i < widths.length ? cell.padEnd(widths[i] as number) : cell)).join('  ')}`.trimEnd();
  return `${[head, ...cells].map(line).join('\n')}\n`;
}

/**
 * Builds the `ledger` command with its dependencies.
 *
 * @example
 * ```ts
 * await createLedgerCommand().run(['--db', 'postback.db', '--order', 'ord_1', '--json'], io);
 * ```
 */
export function createLedgerCommand(ctx: CommandContext = defaultContext): Command {
  return defineCommand(ledgerSpec, async ({ values }, io) => {
    const query: LedgerQuery = {
      ...(values.since === undefined ? {} : { since: sinceOf(values.since, ctx.now()) }),
      ...(values.order === undefined ? {} : { orderId: values.order }),
      ...(values.account === undefined ? {} : { account: values.account }),
      ...(values.limit === undefined ? {} : { limit: values.limit }),
    };
    const backend = await openFromFlags(ctx, backendFlags(values), io.env, {
      mustExist: true,
      readOnly: true,
    });
    try {
      if (!backend.outbox.features.ledger)
        throw new UsageError('this backend keeps no ledger (SQS): use SQLite or Postgres');
      let rows: LedgerEntry[];
      try {
        rows = await backend.outbox.readLedger(query);
      } catch (error) {
        const problem = validationProblem(error);
        if (problem === null) throw error;
        const flag = problem.field === 'orderId' ? 'order' : problem.field;
        throw new UsageError(`--${flag}: ${problem.reason}`);
      }
      const views = rows.map(view);
      io.stdout(values.json ? `${jsonText({ rows: views })}\n` : table(views));
      return EXIT.ok;
    } finally {
      await backend.outbox.close();
    }
  });
}

export const command: Command = createLedgerCommand();

/**
 * `postback ledger`: who moved the money. `dlq replay`, `dlq purge` and `refund` write a row with the
 * operator (`--as`, else `$USER`); final states are written by the store; `--json` has a documented shape.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { seedDead } from './db-fixture.ts';

setUpCommandHarness();

const ledger = async (...extra: string[]) =>
  JSON.parse((await run(['ledger', '--db', db.file, '--json', ...extra])).out).rows as Array<
    Record<string, unknown>
  >;

describe('postback ledger', () => {
  it('a replay via the CLI writes a replay row naming the user from $USER', async () => {
    const outbox = db.open();
    const [job] = await seedDead(outbox, ['d-1'], 'gone');
    await outbox.close();
    const io = captureIo({ env: { USER: 'ana' } });
    expect(await main(['dlq', 'replay', '--db', db.file, '--id', job?.id as string], io)).toBe(0);
    const rows = await ledger();
    expect(rows.map((row) => [row.kind, row.actor, row.orderId])).toEqual([
      ['dead', 'dispatcher', 'd-1'],
      ['replay', 'ana', 'd-1'],
    ]);
  });

  it('a purge and a refund write a row each with the --as name, and --order filters', async () => {
    const outbox = db.open();
    await seedDead(outbox, ['d-1', 'd-2'], 'gone');
    await outbox.close();
    expect((await run(['dlq', 'purge', '--db', db.file, '--all', '--yes', '--as', 'ops-bot'])).code).toBe(0);
    expect(
      (await run(['refund', '--db', db.file, '--order-id', 'r-1', '--campaign-id', 'cmp_1', '--as', 'ben']))
        .code,
    ).toBe(0);
    const rows = await ledger('--order', 'd-1');
    expect(rows.map((row) => [row.kind, row.actor])).toEqual([
      ['dead', 'dispatcher'],
      ['purge', 'ops-bot'],
    ]);
    expect((await ledger()).filter((row) => row.kind === 'purge')).toHaveLength(2);
    expect((await ledger('--order', 'r-1')).map((row) => [row.kind, row.actor])).toEqual([['refund', 'ben']]);
  });

  it('--json prints each row with its documented fields, at as ISO 8601', async () => {
    const outbox = db.open();
    const [job] = await seedDead(outbox, ['d-1'], 'Ad service answered 422: unknown click token');
    await outbox.close();
    const [row] = await ledger();
    expect(row).toEqual({
      seq: expect.any(Number),
      at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      actor: 'dispatcher',
      kind: 'dead',
      jobId: job?.id,
      orderId: 'd-1',
      account: null,
      valueMicros: job?.kind === 'confirm' ? job.valueMicros : null,
      reason: 'Ad service answered 422: unknown click token',
    });
  });

  it('the text table shows who did what, and a bad --since is a usage error naming the flag', async () => {
    const outbox = db.open();
    await seedDead(outbox, ['d-1'], 'gone');
    await outbox.close();
    const { code, out } = await run(['ledger', '--db', db.file]);
    expect(code).toBe(0);
    expect(out).toMatch(/^AT\s+KIND\s+WHO\s+ORDER/);
    expect(out).toMatch(/dead\s+dispatcher\s+d-1/);
    const bad = await run(['ledger', '--db', db.file, '--since', '2026-99-99']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--since');
  });
});

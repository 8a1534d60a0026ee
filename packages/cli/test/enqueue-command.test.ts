/**
 * `postback enqueue`: jobs from NDJSON in a file or on stdin, each bad line reported by number and field.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { RefundInput } from '@postback/core';
import { describe, expect, it } from 'vitest';
import { createEnqueueCommand } from '../src/commands/enqueue.ts';
import { defaultContext } from '../src/context.ts';
import { captureIo } from './capture-io.ts';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { token } from './db-fixture.ts';

setUpCommandHarness();

describe('postback enqueue', () => {
  const confirmLine = (i: number) =>
    JSON.stringify({
      kind: 'confirm',
      click_token: token(i),
      order_id: `o-${i}`,
      value_micros: 1000 + i,
      clicked_at: new Date(Date.now() - 1000).toISOString(),
    });

  it('enqueues every good line, reports each bad line by number and field, and exits 1', async () => {
    const lines = [
      confirmLine(1),
      '{"kind":"confirm","click_token":"t","order_id":"o-x","value_micros":"12.5","clicked_at":"2026-01-01T00:00:00Z"}',
      '',
      confirmLine(2),
      'not json',
      JSON.stringify({ kind: 'refund', order_id: 'o-1' }),
      JSON.stringify({
        kind: 'confirm',
        click_token: 'bad token!',
        order_id: 'o-9',
        value_micros: 1,
        clicked_at: Date.now(),
      }),
      confirmLine(1),
    ];
    const file = join(db.dir, 'jobs.ndjson');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const { code, out, err } = await run(['enqueue', '--db', db.file, '--from', file]);
    expect(code).toBe(1);
    expect(err).toMatch(/^line 2: value_micros: /m);
    expect(err).toMatch(/^line 5: not valid JSON/m);
    expect(err).toMatch(/^line 7: click_token: /m);
    expect(out).toMatch(/confirms 2 created, 1 already there/);
    expect(out).toMatch(/1 cancelled unsent/);
    const outbox = db.open();
    const stats = await outbox.stats(Date.now());
    expect(stats.counts).toMatchObject({ pending: 1, cancelled: 1 });
    await outbox.close();
  });

  it('prints one JSON summary with the errors when asked, and exits 0 when every line is good', async () => {
    const file = join(db.dir, 'jobs.ndjson');
    writeFileSync(file, `${[1, 2, 3].map(confirmLine).join('\r\n')}\r\n`);
    const { code, out, err } = await run(['enqueue', '--db', db.file, '--from', file, '--json']);
    expect(code).toBe(0);
    expect(err).toBe('');
    expect(JSON.parse(out)).toEqual({
      lines: 3,
      confirms: { created: 3, existing: 0 },
      refunds: { enqueued: 0, duplicate: 0, cancelled: 0, 'not-charged': 0, updated: 0 },
      invalid: 0,
      errors: [],
      windows: { open: { rows: 3, valueMicros: 3_006 }, lost: { rows: 0, valueMicros: 0 } },
    });
  });

  it('reads stdin when --from is -', async () => {
    const io = captureIo();
    const stdin = Readable.from([`${confirmLine(1)}\n{"kind":"refund"}\n`]);
    const command = createEnqueueCommand(undefined, stdin);
    const code = await command.run(['--db', db.file, '--from', '-', '--json'], io);
    expect(code).toBe(1);
    expect(JSON.parse(io.out())).toMatchObject({
      confirms: { created: 1 },
      invalid: 1,
      errors: [{ line: 2, field: 'order_id' }],
    });
  });

  it('streams a 20,000-line file and enqueues every line', async () => {
    const file = join(db.dir, 'big.ndjson');
    writeFileSync(file, `${Array.from({ length: 20_000 }, (_, i) => confirmLine(i)).join('\n')}\n`);
    const { code, out } = await run(['enqueue', '--db', db.file, '--from', file, '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(out).confirms.created).toBe(20_000);
  });

  it('counts a refund outcome this version does not know under its own name', async () => {
    // A store of a later core answering a refund with an outcome of its own (issue 22: `window-closed`).
    const command = createEnqueueCommand({
      ...defaultContext,
      openBackend: async (flags, env) => {
        const backend = await defaultContext.openBackend(flags, env);
        const outbox = backend.outbox;
        return {
          ...backend,
          outbox: {
            ...outbox,
            refund: async (input: RefundInput) => ({
              ...(await outbox.refund(input)),
              outcome: 'window-closed',
            }),
          },
        } as unknown as typeof backend;
      },
    });
    const file = join(db.dir, 'refunds.ndjson');
    writeFileSync(file, `${JSON.stringify({ kind: 'refund', order_id: 'o-1', campaign_id: 'cmp_1' })}\n`);
    const json = captureIo();
    expect(await command.run(['--db', db.file, '--from', file, '--json'], json)).toBe(0);
    expect(JSON.parse(json.out()).refunds).toMatchObject({ enqueued: 0, 'window-closed': 1 });
    const textIo = captureIo();
    await command.run(['--db', db.file, '--from', file], textIo);
    expect(textIo.out()).toMatch(/0 given a campaign, 1 window-closed; 0 invalid/);
  });

  it('exits 2 for a missing input file', async () => {
    const { code, err } = await run(['enqueue', '--db', db.file, '--from', join(db.dir, 'missing.ndjson')]);
    expect(code).toBe(2);
    expect(err).toMatch(/no such file/);
  });
});

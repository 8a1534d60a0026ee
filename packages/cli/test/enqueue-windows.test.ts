/**
 * `postback enqueue` as a backfill with eyes open: `--dry-run` counts the rows still inside their window
 * and those already lost, with their value, and writes nothing; the real run prints the same summary;
 * a worker then delivers exactly the rows said to be inside (the sandbox's own records), and running the
 * file again creates nothing.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DAY_MS } from '@postback/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';
import { type DbFixture, dbFixture } from './db-fixture.ts';
import { type ServiceFixture, startService } from './service-fixture.ts';

let db: DbFixture;
let service: ServiceFixture;

beforeEach(async () => {
  db = dbFixture();
  service = await startService();
});
afterEach(async () => {
  await service?.close();
  db.cleanup();
});

async function run(args: string[], env: Record<string, string> = {}) {
  const io = captureIo({ env });
  const code = await main(args, io);
  return { code, out: io.out(), err: io.err() };
}

/** Three rows clicked an hour ago (inside their window) and two clicked 8 days ago (lost). */
async function backfillFile(): Promise<{ file: string; inside: string[]; lost: string[] }> {
  const campaign = await service.campaign('s2s');
  const lines: string[] = [];
  const inside: string[] = [];
  const lost: string[] = [];
  for (let i = 0; i < 5; i++) {
    const click = await service.click(campaign);
    const late = i >= 3;
    const orderId = `${late ? 'old' : 'new'}-${i}`;
    (late ? lost : inside).push(orderId);
    lines.push(
      JSON.stringify({
        kind: 'confirm',
        click_token: click.token,
        order_id: orderId,
        value_micros: late ? 2_000_000 : 1_500_000,
        clicked_at: new Date(late ? Date.now() - 8 * DAY_MS : click.clickedAt - 3_600_000).toISOString(),
      }),
    );
  }
  const file = join(db.dir, 'backfill.ndjson');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, inside, lost };
}

const WINDOWS = {
  open: { rows: 3, valueMicros: 4_500_000 },
  lost: { rows: 2, valueMicros: 4_000_000 },
};

describe('postback enqueue: windows of a backfill', () => {
  it('--dry-run counts the rows inside and past their window with their value, and creates no database', async () => {
    const { file } = await backfillFile();
    const json = await run(['enqueue', '--db', db.file, '--from', file, '--dry-run', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toEqual({
      dryRun: true,
      lines: 5,
      confirms: 5,
      refunds: 0,
      invalid: 0,
      errors: [],
      windows: WINDOWS,
    });
    const text = await run(['enqueue', '--db', db.file, '--from', file, '--dry-run']);
    expect(text.out).toBe(
      'dry run: nothing was written\n5 line(s): 5 confirm(s), 0 refund(s); 0 invalid\n' +
        'windows: 3 confirmation(s) inside their window (worth 4.50), 2 already past it (worth 4.00): lost, never sent\n',
    );
    expect(existsSync(db.file)).toBe(false);
  });

  it('--dry-run reports a bad line as the real run does, and still writes nothing', async () => {
    const file = join(db.dir, 'bad.ndjson');
    writeFileSync(
      file,
      `${JSON.stringify({ kind: 'confirm', click_token: 'bad token!', order_id: 'o', value_micros: 1, clicked_at: Date.now() })}\n`,
    );
    const dry = await run(['enqueue', '--db', db.file, '--from', file, '--dry-run']);
    expect(dry.code).toBe(1);
    expect(existsSync(db.file)).toBe(false);
    const real = await run(['enqueue', '--db', db.file, '--from', file]);
    expect(real.code).toBe(1);
    expect(dry.err).toBe(real.err);
    expect(dry.err).toMatch(/^line 1: click_token: /);
  });

  it('the real run prints the same summary; a worker delivers exactly the rows inside; a second run creates nothing', async () => {
    const { file, inside } = await backfillFile();
    const first = await run(['enqueue', '--db', db.file, '--from', file, '--json']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out)).toMatchObject({ confirms: { created: 5, existing: 0 }, windows: WINDOWS });
    const text = await run(['enqueue', '--db', db.file, '--from', file]);
    expect(text.out).toMatch(
      /\nwindows: 3 confirmation\(s\) inside their window \(worth 4\.50\), 2 already past it \(worth 4\.00\): lost, never sent\n$/,
    );

    const worker = ['worker', '--db', db.file, '--base-url', service.url, '--drain', '--poll-ms', '20'];
    expect((await run(worker, { POSTBACK_API_KEY: service.keys.conversions })).code).toBe(0);
    const applied = await service.sandbox.control.conversions(service.accountId);
    expect(applied.conversions.map((c) => c.order_id).sort()).toEqual([...inside].sort());
    expect(applied.counts.late).toBe(0);

    const again = await run(['enqueue', '--db', db.file, '--from', file, '--json']);
    expect(JSON.parse(again.out)).toMatchObject({ confirms: { created: 0, existing: 5 }, windows: WINDOWS });
    expect((await run(worker, { POSTBACK_API_KEY: service.keys.conversions })).code).toBe(0);
    const outbox = db.open();
    expect((await outbox.stats(Date.now())).counts).toMatchObject({ delivered: 3, expired: 2, pending: 0 });
    await outbox.close();
    expect((await service.sandbox.control.conversions(service.accountId)).counts.requests).toBe(3);
  });
});

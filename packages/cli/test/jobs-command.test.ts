/**
 * `postback jobs`: filters (state, reason, status, order, kind, deadline, age), paging, the table and
 * NDJSON, and a backend that cannot list a state.
 */
import type { Outbox } from '@postback/core';
import { describe, expect, it } from 'vitest';
import { createJobsCommand } from '../src/commands/jobs.ts';
import { type CommandContext, defaultContext } from '../src/context.ts';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { seedDead, token } from './db-fixture.ts';

setUpCommandHarness();

const H = 3_600_000;
const D = 24 * H;

/**
 * Three dead confirmations (404), one pending whose deadline is 11 h away with a 503 attempt, one
 * pending with 6 days left, and one delivered; returns the outbox closed.
 */
async function seed(): Promise<void> {
  const outbox = db.open();
  await seedDead(outbox, ['dead-1', 'dead-2', 'dead-3'], 'Ad service answered 404: click_token not found');
  // Deadline: click + 7 days - 1 hour, so 11 hours from now.
  await outbox.confirm({
    orderId: 'soon',
    valueMicros: 5,
    click: { token: token(10), clickedAt: Date.now() - 7 * D + 12 * H },
  });
  const [soon] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
  if (soon === undefined) throw new Error('nothing claimed');
  await outbox.retry(soon, {
    now: Date.now(),
    nextAttemptAt: Date.now(),
    error: 'Ad service answered 503: try again\nlater',
    attempt: {
      startedAt: Date.now(),
      durationMs: 900,
      outcome: 'transient',
      status: 503,
      detail: 'try again',
    },
  });
  await outbox.confirm({
    orderId: 'later',
    valueMicros: 5,
    click: { token: token(11), clickedAt: Date.now() },
  });
  await outbox.confirm({
    orderId: 'done',
    valueMicros: 5,
    click: { token: token(12), clickedAt: Date.now() },
  });
  const claimed = await outbox.claim({ now: Date.now(), limit: 10, leaseMs: 60_000 });
  for (const job of claimed) {
    if (job.orderId === 'done') await outbox.complete(job, { now: Date.now(), campaignId: 'cmp_1' });
    else await outbox.release([job], Date.now());
  }
  await outbox.close();
}

async function ndjson(args: string[]): Promise<Array<Record<string, unknown>>> {
  const { code, out, err } = await run(['jobs', '--db', db.file, '--json', ...args]);
  expect(code, err).toBe(0);
  return out === ''
    ? []
    : out
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
}

const orders = (jobs: Array<Record<string, unknown>>) => jobs.map((job) => job.orderId);

describe('postback jobs', () => {
  it('lists every job most urgent first, one JSON object per line, and filters by each criterion', async () => {
    await seed();
    const all = await ndjson([]);
    expect(all).toHaveLength(6);
    expect(all[0]).toMatchObject({ orderId: 'soon', state: 'pending', attempts: 1, kind: 'confirm' });
    expect(typeof all[0]?.nextAttemptAt).toBe('string');
    expect(all[0]).not.toHaveProperty('clickToken');

    expect(orders(await ndjson(['--state', 'dead'])).sort()).toEqual(['dead-1', 'dead-2', 'dead-3']);
    expect(orders(await ndjson(['--state', 'pending,delivered'])).sort()).toEqual(['done', 'later', 'soon']);
    expect(orders(await ndjson(['--reason', 'click_token not f']))).toHaveLength(3);
    expect(orders(await ndjson(['--reason', '^Ad service answered 503']))).toEqual(['soon']);
    expect(orders(await ndjson(['--status', '503']))).toEqual(['soon']);
    expect(orders(await ndjson(['--status', '404']))).toEqual([]);
    expect(orders(await ndjson(['--order', 'later']))).toEqual(['later']);
    expect(orders(await ndjson(['--kind', 'refund']))).toEqual([]);
    expect(orders(await ndjson(['--deadline-within', '24h']))).toEqual(['soon']);
    expect(orders(await ndjson(['--deadline-within', '12h', '--state', 'dead']))).toEqual([]);
    expect(await ndjson(['--older-than', '1h'])).toEqual([]);
  });

  it("counts --older-than back from the command's clock", async () => {
    await seed();
    const inTwoHours: CommandContext = { ...defaultContext, now: () => Date.now() + 2 * H };
    const io = captureIo();
    expect(
      await createJobsCommand(inTwoHours).run(['--db', db.file, '--older-than', '1h', '--json'], io),
    ).toBe(0);
    expect(io.out().trimEnd().split('\n')).toHaveLength(6);
  });

  it('pages with --limit and --offset, and says how to get the next page', async () => {
    await seed();
    const first = await ndjson(['--limit', '4']);
    const second = await ndjson(['--limit', '4', '--offset', '4']);
    expect(first).toHaveLength(4);
    expect(second).toHaveLength(2);
    expect(new Set([...orders(first), ...orders(second)]).size).toBe(6);
    const { out } = await run(['jobs', '--db', db.file, '--limit', '4']);
    expect(out).toMatch(/more: postback jobs \.\.\. --offset 4\n$/);
    expect((await run(['jobs', '--db', db.file, '--limit', '4', '--offset', '4'])).out).not.toMatch(/more:/);
  });

  it('prints a table: id, order, account, kind, state, attempts, ISO deadline with the time left, escaped last error', async () => {
    await seed();
    const { code, out } = await run(['jobs', '--db', db.file, '--order', 'soon']);
    expect(code).toBe(0);
    const [header, row, ...rest] = out.trimEnd().split('\n');
    expect(rest).toEqual([]);
    expect(header).toMatch(/^ID +ORDER +ACCOUNT +KIND +STATE +ATTEMPTS +DEADLINE +LAST ERROR$/);
    expect(row).toMatch(
      /^\S+ +soon +- +confirm +pending +1 +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \(in 1[01]h \d+m\) +Ad service answered 503: try again\\u\{a\}later$/,
    );
    expect((await run(['jobs', '--db', db.file, '--state', 'cancelled'])).out).toBe('no jobs match\n');
  });

  it('cuts the last error to 80 characters off a terminal, and to the terminal width on one', async () => {
    const outbox = db.open();
    await seedDead(outbox, ['long'], `Ad service answered 422: ${'x'.repeat(200)}`);
    await outbox.close();
    const plain = (await run(['jobs', '--db', db.file])).out.split('\n')[1] as string;
    expect(plain).toMatch(/ Ad service answered 422: x+…$/);
    expect(plain.slice(plain.indexOf('Ad service'))).toHaveLength(80);
    const io = captureIo({ isTTY: true, env: { COLUMNS: '120' } });
    expect(await main(['jobs', '--db', db.file], io)).toBe(0);
    const lines = io.out().trimEnd().split('\n');
    expect(lines[1]).toHaveLength(120);
    expect(lines[1]).toMatch(/x…$/);
  });

  it('refuses bad filters as usage errors (exit 2) naming the flag', async () => {
    db.open().close();
    const cases: Array<[string[], RegExp]> = [
      [['--state', 'dead,gone'], /--state must be among pending, .*got 'gone'/],
      [['--reason', '(unclosed'], /--reason is not a valid regular expression/],
      [['--status', '99'], /--status must be an integer 100\.\.599/],
      [['--kind', 'charge'], /--kind must be confirm or refund/],
      [['--deadline-within', '24'], /--deadline-within must be a duration like 90m, 24h or 2d/],
      [['--limit', '1001'], /--limit must be an integer 1\.\.1000/],
    ];
    for (const [args, message] of cases) {
      const { code, err } = await run(['jobs', '--db', db.file, ...args]);
      expect(code, args.join(' ')).toBe(2);
      expect(err).toMatch(message);
    }
  });

  it('exits 2 naming the backend and what it can list when asked for a state it cannot list', async () => {
    await seed();
    // An SQLite file seen through an outbox that lists only dead jobs, as SQS does.
    const deadOnly: CommandContext = {
      ...defaultContext,
      openBackend: async (flags, env) => {
        const opened = await defaultContext.openBackend(flags, env);
        const features = { ...opened.outbox.features, listableStates: ['dead'] as const };
        const outbox = new Proxy(opened.outbox, {
          get: (target, key) => (key === 'features' ? features : Reflect.get(target, key)),
        }) as Outbox;
        return { ...opened, outbox };
      },
    };
    const refused = captureIo();
    expect(await createJobsCommand(deadOnly).run(['--db', db.file, '--state', 'pending,dead'], refused)).toBe(
      2,
    );
    expect(refused.err()).toBe(
      'postback jobs: the SQLite backend cannot list pending jobs; it lists only dead\n',
    );
    expect(refused.out()).toBe('');
    const listed = captureIo();
    expect(await createJobsCommand(deadOnly).run(['--db', db.file, '--state', 'dead'], listed)).toBe(0);
    expect(listed.out().trimEnd().split('\n')).toHaveLength(4);
  });
});

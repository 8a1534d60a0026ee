import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createMemoryOutbox } from '@postback/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEnqueueCommand } from '../src/commands/enqueue.ts';
import { createRefundCommand } from '../src/commands/refund.ts';
import { main } from '../src/main.ts';
import { captureIo } from './capture-io.ts';
import { type DbFixture, dbFixture, seedDead, token } from './db-fixture.ts';

let db: DbFixture;
beforeEach(() => {
  db = dbFixture();
});
afterEach(() => db.cleanup());

async function run(args: string[], options: { isTTY?: boolean } = {}) {
  const io = captureIo(options);
  const code = await main(args, io);
  return { code, out: io.out(), err: io.err() };
}

describe('every queue command', () => {
  it.each(['worker', 'status', 'dlq', 'confirm', 'refund', 'enqueue'])(
    '%s prints its usage with --help and exits 0',
    async (name) => {
      const { code, out } = await run([name, '--help']);
      expect(code).toBe(0);
      expect(out).toMatch(/^Usage:/);
      expect(out).toMatch(/Exit codes/);
    },
  );

  it.each(['status', 'dlq list', 'confirm', 'refund', 'enqueue'])(
    '%s exits 2 naming an unknown flag',
    async (name) => {
      const { code, err } = await run([...name.split(' '), '--db', db.file, '--frobnicate']);
      expect(code).toBe(2);
      expect(err).toMatch(/--frobnicate/);
    },
  );

  it('exits 2 when no backend or two backends are given', async () => {
    expect((await run(['status'])).code).toBe(2);
    const both = await run(['status', '--db', db.file, '--pg', 'postgres://127.0.0.1/test']);
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/exactly one of --db/);
  });
});

describe('postback status', () => {
  it('exits 3 for a database file that does not exist instead of creating an empty one', async () => {
    const missing = join(db.dir, 'nope.db');
    const { code, err } = await run(['status', '--db', missing]);
    expect(code).toBe(3);
    expect(err).toMatch(/no such database file/);
  });

  it('reports counts by state, oldest pending, nearest deadline and dead jobs with reasons as JSON', async () => {
    const outbox = db.open();
    const clickedAt = Date.now() - 3_600_000;
    await seedDead(outbox, ['dead-1', 'dead-2'], 'Ad service answered 404: click_token not found');
    await outbox.confirm({ orderId: 'pending-1', valueMicros: 5, click: { token: token(1), clickedAt } });
    await outbox.close();

    const { code, out } = await run(['status', '--db', db.file, '--json']);
    expect(code).toBe(0);
    const status = JSON.parse(out);
    expect(status.counts).toEqual({
      pending: 1,
      inflight: 0,
      delivered: 0,
      dead: 2,
      expired: 0,
      cancelled: 0,
    });
    expect(status.total).toBe(3);
    expect(typeof status.oldestPendingAt).toBe('string');
    expect(status.nearestDeadline).toMatchObject({ orderId: 'pending-1', kind: 'confirm' });
    expect(Date.parse(status.nearestDeadline.deadline)).toBe(clickedAt + 7 * 86_400_000 - 3_600_000);
    expect(status.dead.map((j: { orderId: string }) => j.orderId).sort()).toEqual(['dead-1', 'dead-2']);
    expect(status.dead[0].reason).toMatch(/click_token not found/);
  });

  it('prints a readable summary without --json', async () => {
    const outbox = db.open();
    await seedDead(outbox, ['dead-1'], 'permanent: 422');
    await outbox.close();
    const { code, out } = await run(['status', '--db', db.file]);
    expect(code).toBe(0);
    expect(out).toMatch(/dead\s+1/);
    expect(out).toMatch(/dead-1/);
    expect(out).toMatch(/permanent: 422/);
  });
});

describe('text output of a hostile reason', () => {
  const reason = 'Ad service answered 422: bad\n| 99 | delivered\u001b[2J\u202eevil';
  const CONTROL = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

  it.each([
    ['status', ['status']],
    ['dlq list', ['dlq', 'list']],
  ])('%s prints the reason on one line, escaped', async (_, command) => {
    const outbox = db.open();
    await seedDead(outbox, ['hostile-1'], reason);
    await outbox.close();
    const { code, out } = await run([...command, '--db', db.file]);
    expect(code).toBe(0);
    const line = out.split('\n').find((l) => l.includes('hostile-1'));
    expect(line).toContain('bad\\u{a}| 99 | delivered\\u{1b}[2J\\u{202e}evil');
    expect(out.split('\n').filter((l) => l.includes('| 99 |'))).toHaveLength(1);
    for (const l of out.split('\n')) expect(l).not.toMatch(CONTROL);
  });

  it.each([
    ['status --json', ['status', '--json'], (o: { dead: Array<{ reason: string }> }) => o.dead[0]?.reason],
    [
      'dlq list --json',
      ['dlq', 'list', '--json'],
      (o: { jobs: Array<{ reason: string }> }) => o.jobs[0]?.reason,
    ],
  ])('%s stays JSON that gives the reason back exactly', async (_, command, pick) => {
    const outbox = db.open();
    await seedDead(outbox, ['hostile-1'], reason);
    await outbox.close();
    const { code, out } = await run([...command, '--db', db.file]);
    expect(code).toBe(0);
    expect(pick(JSON.parse(out))).toBe(reason);
    expect(out.trimEnd()).not.toMatch(CONTROL);
  });
});

describe('postback confirm', () => {
  const args = () => [
    'confirm',
    '--db',
    db.file,
    '--click-token',
    token(7),
    '--order-id',
    'o-7',
    '--value-micros',
    '1990000',
    '--clicked-at',
    new Date(Date.now() - 60_000).toISOString(),
    '--json',
  ];

  it('enqueues one confirmation, then says the order is already there on a second call', async () => {
    const first = await run(args());
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out)).toMatchObject({
      created: true,
      job: { kind: 'confirm', orderId: 'o-7', state: 'pending' },
    });
    const second = await run(args());
    expect(second.code).toBe(0);
    expect(JSON.parse(second.out)).toMatchObject({ created: false, job: { orderId: 'o-7' } });
    const text = await run(args().slice(0, -1));
    expect(text.out).toMatch(/already has a confirm job/);
    const outbox = db.open();
    expect(await outbox.getByOrder('o-7')).toHaveLength(1);
    await outbox.close();
  });

  it('exits 2 naming --value-micros for a decimal amount, and enqueues nothing', async () => {
    const bad = args();
    bad[bad.indexOf('--value-micros') + 1] = '19.90';
    const { code, err } = await run(bad);
    expect(code).toBe(2);
    expect(err).toMatch(/--value-micros/);
  });

  it('exits 2 naming --click-token when the outbox refuses the token', async () => {
    const bad = args();
    bad[bad.indexOf('--click-token') + 1] = 'has spaces <script>';
    const { code, err } = await run(bad);
    expect(code).toBe(2);
    expect(err).toMatch(/--click-token/);
    const outbox = db.open();
    expect(await outbox.getByOrder('o-7')).toEqual([]);
    await outbox.close();
  });

  it('exits 2 naming a missing required flag and a click time without a zone', async () => {
    const missing = await run(['confirm', '--db', db.file, '--click-token', token(1), '--value-micros', '1']);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/--order-id is required/);
    const zoneless = args();
    zoneless[zoneless.indexOf('--clicked-at') + 1] = '2026-01-02T03:04:05';
    const noZone = await run(zoneless);
    expect(noZone.code).toBe(2);
    expect(noZone.err).toMatch(/--clicked-at/);
  });
});

describe('postback refund', () => {
  it('cancels a confirmation that was not sent yet, then reports the refund as not charged', async () => {
    const outbox = db.open();
    await outbox.confirm({
      orderId: 'o-1',
      valueMicros: 1,
      click: { token: token(1), clickedAt: Date.now() },
    });
    await outbox.close();
    const first = await run(['refund', '--db', db.file, '--order-id', 'o-1', '--json']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out)).toMatchObject({
      outcome: 'cancelled',
      job: { kind: 'confirm', state: 'cancelled' },
    });
    const again = await run(['refund', '--db', db.file, '--order-id', 'o-1']);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/without a charge/);
  });

  it('enqueues a reversal of a delivered confirmation using its campaign, once', async () => {
    const outbox = db.open();
    await outbox.confirm({
      orderId: 'o-2',
      valueMicros: 1,
      click: { token: token(2), clickedAt: Date.now() },
    });
    const [job] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
    await outbox.complete(job as never, { now: Date.now(), campaignId: 'cmp_abc' });
    await outbox.close();
    const first = await run(['refund', '--db', db.file, '--order-id', 'o-2', '--json']);
    expect(JSON.parse(first.out)).toMatchObject({
      outcome: 'enqueued',
      job: { kind: 'refund', campaignId: 'cmp_abc' },
    });
    const second = await run(['refund', '--db', db.file, '--order-id', 'o-2', '--json']);
    expect(JSON.parse(second.out)).toMatchObject({ outcome: 'duplicate' });
  });

  it('gives a dead reversal that had no campaign the one given with --campaign-id: outcome updated, pending again', async () => {
    const outbox = createMemoryOutbox();
    await outbox.confirm({
      orderId: 'o-4',
      valueMicros: 1,
      click: { token: token(4), clickedAt: Date.now() },
    });
    const [confirm] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
    // The confirmation's answer carried no campaign: the reversal cannot be sent and dead-letters.
    await outbox.complete(confirm as never, { now: Date.now(), campaignId: null });
    await outbox.refund({ orderId: 'o-4' });
    const [refund] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
    await outbox.fail(refund as never, { now: Date.now(), state: 'dead', reason: 'no campaign known' });
    const ctx = { openBackend: async () => ({ outbox, describe: 'memory' }), now: () => Date.now() };
    const io = captureIo();
    const args = ['--db', db.file, '--order-id', 'o-4', '--campaign-id', 'cmp_given', '--json'];
    expect(await createRefundCommand(ctx).run(args, io)).toBe(0);
    expect(JSON.parse(io.out())).toMatchObject({
      outcome: 'updated',
      job: { kind: 'refund', campaignId: 'cmp_given', state: 'pending' },
    });
  });

  it('says in text which campaign a refund now reverses in when it supplies one', async () => {
    const outbox = createMemoryOutbox();
    await outbox.confirm({
      orderId: 'o-5',
      valueMicros: 1,
      click: { token: token(5), clickedAt: Date.now() },
    });
    const [confirm] = await outbox.claim({ now: Date.now(), limit: 1, leaseMs: 60_000 });
    await outbox.complete(confirm as never, { now: Date.now(), campaignId: null });
    await outbox.refund({ orderId: 'o-5' });
    const ctx = { openBackend: async () => ({ outbox, describe: 'memory' }), now: () => Date.now() };
    const io = captureIo();
    const code = await createRefundCommand(ctx).run(
      ['--db', db.file, '--order-id', 'o-5', '--campaign-id', 'cmp_late'],
      io,
    );
    expect(code).toBe(0);
    expect(io.out()).toMatch(/now reverses in campaign cmp_late/);
  });

  it('exits 2 naming --campaign-id when it is not of the form cmp_<id>', async () => {
    const { code, err } = await run([
      'refund',
      '--db',
      db.file,
      '--order-id',
      'o-3',
      '--campaign-id',
      'campaign 3',
    ]);
    expect(code).toBe(2);
    expect(err).toMatch(/--campaign-id/);
  });
});

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

  it('exits 2 for a missing input file', async () => {
    const { code, err } = await run(['enqueue', '--db', db.file, '--from', join(db.dir, 'missing.ndjson')]);
    expect(code).toBe(2);
    expect(err).toMatch(/no such file/);
  });
});

describe('postback dlq', () => {
  it('lists dead jobs with their reasons and pages with --after', async () => {
    const outbox = db.open();
    await seedDead(outbox, ['d-1', 'd-2', 'd-3'], 'Ad service answered 422: click is older than 7 days');
    await outbox.close();
    const page1 = JSON.parse((await run(['dlq', 'list', '--db', db.file, '--limit', '2', '--json'])).out);
    expect(page1.jobs).toHaveLength(2);
    expect(page1.jobs[0].reason).toMatch(/older than 7 days/);
    expect(page1.next).toBe(page1.jobs[1].id);
    const page2 = JSON.parse(
      (await run(['dlq', 'list', '--db', db.file, '--limit', '2', '--after', page1.next, '--json'])).out,
    );
    expect(page2.jobs).toHaveLength(1);
    expect(page2.next).toBeNull();
    const seen = [...page1.jobs, ...page2.jobs].map((j: { orderId: string }) => j.orderId).sort();
    expect(seen).toEqual(['d-1', 'd-2', 'd-3']);
  });

  it('replays one dead job by id back to pending with its attempts reset', async () => {
    const outbox = db.open();
    const [job] = await seedDead(outbox, ['d-1', 'd-2'], 'gone');
    await outbox.close();
    const { code, out } = await run(['dlq', 'replay', '--db', db.file, '--id', job?.id as string, '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual({
      replayed: 1,
      expired: 0,
      expiredJobs: [],
      cancelled: 0,
      cancelledJobs: [],
      notDead: [],
    });
    const check = db.open();
    expect(await check.get(job?.id as string)).toMatchObject({ state: 'pending', attempts: 0 });
    expect((await check.stats(Date.now())).counts.dead).toBe(1);
    await check.close();
  });

  it('replays all with a progress bar on a terminal and a plain summary otherwise', async () => {
    const outbox = db.open();
    await seedDead(
      outbox,
      Array.from({ length: 450 }, (_, i) => `d-${i}`),
      'gone',
    );
    await outbox.close();
    const tty = await run(['dlq', 'replay', '--db', db.file, '--all'], { isTTY: true });
    expect(tty.code).toBe(0);
    expect(tty.out).toMatch(/\rreplaying \[#+-*\] 200\/450/);
    expect(tty.out).toMatch(/450\/450\n/);
    expect(tty.out).toMatch(/replayed 450 job/);

    const again = db.open();
    const claimed = await again.claim({ now: Date.now(), limit: 450, leaseMs: 60_000 });
    for (const job of claimed) await again.fail(job, { now: Date.now(), state: 'dead', reason: 'gone' });
    await again.close();
    const plain = await run(['dlq', 'replay', '--db', db.file, '--all']);
    expect(plain.out).toBe('replayed 450 job(s)\n');
  });

  it('expires instead of replaying a dead job whose deadline has passed', async () => {
    const outbox = db.open();
    // Clicked 6 days 23.5 hours ago: the deadline (7 days minus 1 hour) is already behind us.
    const [late] = await seedDead(outbox, ['late-1'], 'gone', Date.now() - 7 * 86_400_000 + 1_800_000);
    await outbox.close();
    const { code, out } = await run(['dlq', 'replay', '--db', db.file, '--all', '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({
      replayed: 0,
      expired: 1,
      expiredJobs: [{ id: late?.id, orderId: 'late-1', state: 'expired' }],
      notDead: [],
    });
  });

  describe('reports which jobs expired instead of being replayed', () => {
    /** Two dead jobs clicked 6 days 23.5 hours ago (deadline passed) and one clicked now. */
    async function seedMixed() {
      const outbox = db.open();
      const late = await seedDead(
        outbox,
        ['late-1', 'late-2'],
        'gone',
        Date.now() - 7 * 86_400_000 + 1_800_000,
      );
      const fresh = await seedDead(outbox, ['fresh-1'], 'gone');
      await outbox.close();
      return { late: late.map((j) => j.id).sort(), fresh: fresh.map((j) => j.id) };
    }

    it.each([['--all'], ['--id']])('as JSON, with %s', async (how) => {
      const { late, fresh } = await seedMixed();
      const select = how === '--all' ? ['--all'] : [...late, ...fresh].flatMap((id) => ['--id', id]);
      const { code, out } = await run(['dlq', 'replay', '--db', db.file, ...select, '--json']);
      expect(code).toBe(0);
      const report = JSON.parse(out);
      expect(report).toMatchObject({ replayed: 1, expired: 2, cancelled: 0, notDead: [] });
      expect(report.expiredJobs.map((j: { id: string }) => j.id).sort()).toEqual(late);
      for (const job of report.expiredJobs) {
        expect(job).toMatchObject({ state: 'expired', kind: 'confirm' });
        expect(Date.parse(job.deadline)).toBeLessThan(Date.now());
      }
      const check = db.open();
      expect(await check.get(fresh[0] as string)).toMatchObject({ state: 'pending' });
      await check.close();
    });

    it.each([['--all'], ['--id']])('as text, with %s, naming each job and its deadline', async (how) => {
      const { late, fresh } = await seedMixed();
      const select = how === '--all' ? ['--all'] : [...late, ...fresh].flatMap((id) => ['--id', id]);
      const { code, out } = await run(['dlq', 'replay', '--db', db.file, ...select]);
      expect(code).toBe(0);
      expect(out).toMatch(
        /^replayed 1 job\(s\)\n2 job\(s\) past their deadline expired instead of being replayed/,
      );
      for (const id of late)
        expect(out).toMatch(new RegExp(`^  ${id} +confirm +order late-\\d +deadline \\d{4}-`, 'm'));
      expect(out).not.toContain('fresh-1');
    });
  });

  it('exits 1 when an --id is not a dead job, still acting on the others', async () => {
    const outbox = db.open();
    const [job] = await seedDead(outbox, ['d-1'], 'gone');
    await outbox.close();
    const { code, out, err } = await run([
      'dlq',
      'purge',
      '--db',
      db.file,
      '--id',
      job?.id as string,
      '--id',
      'job_nope',
    ]);
    expect(code).toBe(1);
    expect(out).toMatch(/purged 1 dead job/);
    expect(err).toMatch(/job_nope: no dead job/);
  });

  it('purges all dead jobs and leaves the others', async () => {
    const outbox = db.open();
    await seedDead(outbox, ['d-1', 'd-2'], 'gone');
    await outbox.confirm({
      orderId: 'live',
      valueMicros: 1,
      click: { token: token(9), clickedAt: Date.now() },
    });
    await outbox.close();
    const { code, out } = await run(['dlq', 'purge', '--db', db.file, '--all', '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual({ purged: 2, notDead: [] });
    const check = db.open();
    expect((await check.stats(Date.now())).counts).toMatchObject({ dead: 0, pending: 1 });
    await check.close();
  });

  it('exits 2 when replay or purge is given neither --id nor --all', async () => {
    for (const action of ['replay', 'purge']) {
      const { code, err } = await run(['dlq', action, '--db', db.file]);
      expect(code).toBe(2);
      expect(err).toMatch(/--id ID .* or --all/);
    }
  });
});

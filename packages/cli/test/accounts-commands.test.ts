/**
 * Advertiser accounts in the queue commands (issue 15), over real SQLite files: an order is its account
 * and its order id, so `confirm --account` and `refund --account` act on one account's order; `enqueue`
 * lines carry an `account`; `jobs`, `job --order` and `dlq` filter by account and show it.
 */
import type { Outbox } from '@postback/core';
import { describe, expect, it } from 'vitest';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { token } from './db-fixture.ts';

setUpCommandHarness();

function confirmArgs(orderId: string, i: number, account?: string): string[] {
  return [
    'confirm',
    '--db',
    db.file,
    '--click-token',
    token(i),
    '--order-id',
    orderId,
    '--value-micros',
    '1000000',
    ...(account === undefined ? [] : ['--account', account]),
    '--json',
  ];
}

/** Dead confirmations, one per (order, account), each with `reason`. */
async function seedDead(outbox: Outbox, orders: Array<[string, string | null]>, reason: string) {
  for (const [i, [orderId, account]] of orders.entries()) {
    await outbox.confirm({
      orderId,
      valueMicros: 1_000_000,
      click: { token: token(i), clickedAt: Date.now() },
      ...(account === null ? {} : { account }),
    });
  }
  const claimed = await outbox.claim({ now: Date.now(), limit: orders.length, leaseMs: 60_000 });
  for (const job of claimed) await outbox.fail(job, { now: Date.now(), state: 'dead', reason });
  return claimed;
}

/** The jobs `postback jobs --json` prints for `args`. */
async function listed(
  args: string[],
): Promise<Array<{ orderId: string; account: string | null; state: string }>> {
  const { code, out, err } = await run(['jobs', '--db', db.file, ...args, '--json']);
  expect(err).toBe('');
  expect(code).toBe(0);
  return out
    .trimEnd()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

/** By order id, then account, the jobs without one last. */
const byOrderAndAccount = (a: { orderId: string; account: string | null }, b: typeof a) =>
  a.orderId === b.orderId
    ? (a.account ?? '\uffff') < (b.account ?? '\uffff')
      ? -1
      : 1
    : a.orderId < b.orderId
      ? -1
      : 1;

describe('confirm and refund --account', () => {
  it('confirm --account keeps the same order id in two accounts apart', async () => {
    const a = await run(confirmArgs('1001', 0, 'shop-a'));
    const b = await run(confirmArgs('1001', 1, 'shop-b'));
    const none = await run(confirmArgs('1001', 2));
    for (const r of [a, b, none]) expect(r.code).toBe(0);
    expect(JSON.parse(a.out)).toMatchObject({ created: true, job: { orderId: '1001', account: 'shop-a' } });
    expect(JSON.parse(b.out)).toMatchObject({ created: true, job: { orderId: '1001', account: 'shop-b' } });
    expect(JSON.parse(none.out)).toMatchObject({ created: true, job: { orderId: '1001', account: null } });
    const again = await run(confirmArgs('1001', 3, 'shop-a').filter((arg) => arg !== '--json'));
    expect(again.out).toMatch(
      /^order 1001 of account shop-a already has a confirm job \S+ \(pending\); nothing changed\n$/,
    );
  });

  it('refund --account reverses the order of that account only', async () => {
    const outbox = db.open();
    for (const [i, account] of ['shop-a', 'shop-b', null].entries()) {
      await outbox.confirm({
        orderId: '1001',
        valueMicros: 1_000_000,
        click: { token: token(i), clickedAt: Date.now() },
        ...(account === null ? {} : { account }),
      });
    }
    await outbox.close();
    const refund = await run(['refund', '--db', db.file, '--order-id', '1001', '--account', 'shop-b']);
    expect(refund.code).toBe(0);
    expect(refund.out).toMatch(
      /^the confirmation of order 1001 of account shop-b was never charged \(not sent, or refused by the service for good\): cancelled it \(\S+\); nothing to reverse\n$/,
    );
    const json = await run([
      'refund',
      '--db',
      db.file,
      '--order-id',
      '1001',
      '--account',
      'shop-a',
      '--json',
    ]);
    expect(JSON.parse(json.out)).toMatchObject({ outcome: 'cancelled', job: { account: 'shop-a' } });
    const jobs = (await listed(['--order', '1001'])).sort(byOrderAndAccount);
    expect(jobs.map((j) => [j.account, j.state])).toEqual([
      ['shop-a', 'cancelled'],
      ['shop-b', 'cancelled'],
      [null, 'pending'],
    ]);
  });

  it('exits 2 naming --account when the account is not valid, and enqueues nothing', async () => {
    for (const bad of ['', '   ', 'x'.repeat(201), 'tab\there']) {
      const confirm = await run(confirmArgs('o-1', 0, bad));
      expect(confirm.code).toBe(2);
      expect(confirm.err).toMatch(/--account/);
      const refund = await run(['refund', '--db', db.file, '--order-id', 'o-1', '--account', bad]);
      expect(refund.code).toBe(2);
      expect(refund.err).toMatch(/--account/);
    }
    expect(await listed([])).toEqual([]);
  });
});

describe('enqueue with accounts', () => {
  it('enqueues each line in its account, reports a bad account by line number and goes on', async () => {
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const file = join(db.dir, 'jobs.ndjson');
    const confirm = (i: number, account?: unknown) =>
      JSON.stringify({
        kind: 'confirm',
        click_token: token(i),
        order_id: 'A-1',
        value_micros: 1_000_000,
        clicked_at: new Date().toISOString(),
        ...(account === undefined ? {} : { account }),
      });
    writeFileSync(
      file,
      [
        confirm(0, 'shop-a'),
        confirm(1, 'shop-b'),
        confirm(2),
        confirm(3, ''),
        JSON.stringify({ kind: 'refund', order_id: 'A-1', account: 'shop-a' }),
        confirm(4, 42),
        confirm(5, null),
      ].join('\n'),
    );
    const { code, out, err } = await run(['enqueue', '--db', db.file, '--from', file]);
    expect(code).toBe(1);
    expect(err).toBe(
      'line 4: account: must not be empty (leave it out for no account)\nline 6: account: must be a string, got number\n',
    );
    expect(out).toMatch(
      /^7 line\(s\): confirms 3 created, 1 already there; refunds 0 enqueued, 0 already there, 1 cancelled unsent, 0 not charged, 0 given a campaign; 2 invalid\nwindows: 4 confirmation\(s\) inside their window \(worth 4\.00\), 0 already past it \(worth 0\.00\)\n$/,
    );
    const jobs = (await listed(['--order', 'A-1'])).sort(byOrderAndAccount);
    expect(jobs.map((j) => [j.account, j.state])).toEqual([
      ['shop-a', 'cancelled'],
      ['shop-b', 'pending'],
      [null, 'pending'],
    ]);
  });
});

describe('jobs and job by account', () => {
  async function seedThree() {
    const outbox = db.open();
    for (const [i, account] of ['shop-a', 'shop-b', null].entries()) {
      await outbox.confirm({
        orderId: 'o-1',
        valueMicros: 1,
        click: { token: token(i), clickedAt: Date.now() },
        ...(account === null ? {} : { account }),
      });
    }
    await outbox.confirm({
      orderId: 'o-2',
      valueMicros: 1,
      click: { token: token(9), clickedAt: Date.now() },
      account: 'shop-a',
    });
    await outbox.close();
  }

  it('jobs --account lists one account, --no-account those without, neither every account', async () => {
    await seedThree();
    expect((await listed(['--account', 'shop-a'])).map((j) => j.orderId).sort()).toEqual(['o-1', 'o-2']);
    expect((await listed(['--account', 'shop-b'])).map((j) => [j.orderId, j.account])).toEqual([
      ['o-1', 'shop-b'],
    ]);
    expect((await listed(['--no-account'])).map((j) => [j.orderId, j.account])).toEqual([['o-1', null]]);
    expect(await listed(['--account', 'shop-z'])).toEqual([]);
    expect(await listed([])).toHaveLength(4);
  });

  it('jobs shows an ACCOUNT column (- for none), and refuses an empty --account or both flags', async () => {
    await seedThree();
    const { out } = await run(['jobs', '--db', db.file, '--order', 'o-1']);
    const [header, ...rows] = out.trimEnd().split('\n');
    expect(header).toMatch(/^ID +ORDER +ACCOUNT +KIND /);
    expect(rows.map((row) => row.split(/ +/)[2]).sort()).toEqual(['-', 'shop-a', 'shop-b']);
    const empty = await run(['jobs', '--db', db.file, '--account', '']);
    expect(empty.code).toBe(2);
    expect(empty.err).toMatch(/--account must not be empty \(give --no-account/);
    const both = await run(['jobs', '--db', db.file, '--account', 'shop-a', '--no-account']);
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/either --account ID or --no-account/);
  });

  it('job --order --account shows that account’s order; without --account, the order without one', async () => {
    await seedThree();
    const a = await run(['job', '--db', db.file, '--order', 'o-1', '--account', 'shop-a', '--json']);
    expect(a.code).toBe(0);
    const report = JSON.parse(a.out);
    expect(report).toMatchObject({ orderId: 'o-1', account: 'shop-a' });
    expect(report.jobs.map((j: { account: string | null }) => j.account)).toEqual(['shop-a']);
    const none = await run(['job', '--db', db.file, '--order', 'o-1']);
    expect(none.out).toMatch(/\n {2}account +-\n/);
    const text = await run(['job', '--db', db.file, '--order', 'o-1', '--account', 'shop-b']);
    expect(text.out).toMatch(/\n {2}account +shop-b\n/);

    const missing = await run(['job', '--db', db.file, '--order', 'o-2']);
    expect(missing.code).toBe(1);
    expect(missing.err).toBe(
      'postback job: no job for order o-2; order o-2 exists in account shop-a: give --account ID\n',
    );
    const byId = await run(['job', '--db', db.file, 'some-id', '--account', 'shop-a']);
    expect(byId.code).toBe(2);
  });
});

describe('dlq by account', () => {
  async function seed() {
    const outbox = db.open();
    const dead = await seedDead(
      outbox,
      [
        ['d-1', 'shop-a'],
        ['d-1', 'shop-b'],
        ['d-2', 'shop-a'],
        ['d-3', null],
      ],
      'Ad service answered 422: bad',
    );
    await outbox.close();
    return dead;
  }

  it('list --account and --no-account show only those dead jobs, with their account', async () => {
    await seed();
    const a = JSON.parse((await run(['dlq', 'list', '--db', db.file, '--account', 'shop-a', '--json'])).out);
    expect(a.jobs.map((j: { orderId: string; account: string }) => [j.orderId, j.account]).sort()).toEqual([
      ['d-1', 'shop-a'],
      ['d-2', 'shop-a'],
    ]);
    expect(a.next).toBeNull();
    const none = JSON.parse((await run(['dlq', 'list', '--db', db.file, '--no-account', '--json'])).out);
    expect(none.jobs.map((j: { orderId: string }) => j.orderId)).toEqual(['d-3']);
    const page = JSON.parse(
      (await run(['dlq', 'list', '--db', db.file, '--account', 'shop-a', '--limit', '1', '--json'])).out,
    );
    expect(page.jobs).toHaveLength(1);
    const rest = JSON.parse(
      (await run(['dlq', 'list', '--db', db.file, '--account', 'shop-a', '--after', page.next, '--json']))
        .out,
    );
    expect([...page.jobs, ...rest.jobs].map((j: { orderId: string }) => j.orderId).sort()).toEqual([
      'd-1',
      'd-2',
    ]);
    const textOut = (await run(['dlq', 'list', '--db', db.file, '--account', 'shop-b'])).out;
    expect(textOut).toMatch(
      /^\S+ +confirm +order d-1 of account shop-b +attempts 1 +Ad service answered 422: bad\n$/,
    );
    expect((await run(['dlq', 'list', '--db', db.file, '--account', 'shop-z'])).out).toBe(
      'no dead jobs of account shop-z\n',
    );
  });

  it('replay --account replays only that account’s dead jobs; --dry-run shows them and changes nothing', async () => {
    await seed();
    const dry = await run(['dlq', 'replay', '--db', db.file, '--account', 'shop-a', '--dry-run', '--json']);
    expect(dry.code).toBe(0);
    const plan = JSON.parse(dry.out);
    expect(plan.replayed).toBe(2);
    expect(plan.replayedJobs.map((j: { account: string }) => j.account)).toEqual(['shop-a', 'shop-a']);
    expect(await listed(['--state', 'dead'])).toHaveLength(4);

    const done = await run(['dlq', 'replay', '--db', db.file, '--account', 'shop-a']);
    expect(done.code).toBe(0);
    expect(done.out).toBe('replayed 2 job(s)\n');
    const dead = (await listed(['--state', 'dead'])).sort(byOrderAndAccount);
    expect(dead.map((j) => [j.orderId, j.account])).toEqual([
      ['d-1', 'shop-b'],
      ['d-3', null],
    ]);
  });

  it('purge --account deletes only that account’s dead jobs; --no-account those without one', async () => {
    await seed();
    const dry = await run(['dlq', 'purge', '--db', db.file, '--account', 'shop-b', '--dry-run']);
    expect(dry.out).toMatch(
      /^dry run: nothing was changed\nwould purge 1 dead job\(s\):\n {2}\S+ +confirm +order d-1 of account shop-b /,
    );
    expect((await run(['dlq', 'purge', '--db', db.file, '--account', 'shop-b', '--yes'])).out).toBe(
      'purged 1 dead job(s)\n',
    );
    expect((await run(['dlq', 'purge', '--db', db.file, '--no-account', '--yes'])).out).toBe(
      'purged 1 dead job(s)\n',
    );
    const left = (await listed(['--state', 'dead'])).map((j) => [j.orderId, j.account]).sort();
    expect(left).toEqual([
      ['d-1', 'shop-a'],
      ['d-2', 'shop-a'],
    ]);
    const both = await run(['dlq', 'purge', '--db', db.file, '--id', 'x', '--account', 'shop-a', '--yes']);
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/either --id ID or filters/);
  });
});

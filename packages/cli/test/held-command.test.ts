/**
 * `postback held`: the orders held for a campaign not on s2s, listed with the switch of their campaign once
 * a worker saw it (then they await a decision, and `status --fail-on-paused` alerts
 * `held-awaiting-decision` with the value at risk and the earliest deadline), and decided by `held send` or
 * `held drop` for one problem, each with a ledger row naming who decided. On a real SQLite file.
 */
import { describe, expect, it } from 'vitest';
import { STATUS_EXIT } from '../src/specs/status.ts';
import { db, run, setUpCommandHarness } from './command-harness.ts';
import { token } from './db-fixture.ts';

setUpCommandHarness();

const NOT_S2S = 'Ad service answered 422: campaign cmp_pix is not on s2s: its conversion source is pixel';

/** Orders held for cmp_pix: three without an account (1.50 each), two of shop-2, one a minute later. */
async function seedHeld(): Promise<{ now: number; secondCreatedAt: number }> {
  const outbox = db.open();
  const now = Date.now();
  const orders: Array<[string | null, string]> = [
    [null, 'ord_0'],
    [null, 'ord_1'],
    [null, 'ord_2'],
    ['shop-2', 'ord_0'],
  ];
  let i = 0;
  for (const [account, orderId] of orders)
    await outbox.confirm({
      account,
      orderId,
      valueMicros: 1_500_000,
      click: { token: token(++i), clickedAt: now - 3_600_000 },
    });
  const secondOfShop2 = now + 60_000;
  const hold = async (at: number) => {
    for (const job of await outbox.claim({ now: at, limit: 10, leaseMs: 30_000 }))
      await outbox.retry(job, {
        now: at,
        nextAttemptAt: at + 86_400_000,
        error: NOT_S2S,
        hold: { campaignId: 'cmp_pix' },
      });
  };
  await hold(now);
  // Created later, for --created-before (the file's outbox stamps the real clock).
  await new Promise((resolve) => setTimeout(resolve, 20));
  const { job: later } = await outbox.confirm({
    account: 'shop-2',
    orderId: 'ord_1',
    valueMicros: 1_500_000,
    click: { token: token(++i), clickedAt: now - 3_600_000 },
  });
  await hold(secondOfShop2);
  // A worker saw cmp_pix accept s2s for the jobs without an account (not for shop-2).
  expect(await outbox.switches?.note({ account: null, campaignId: 'cmp_pix', at: now + 120_000 })).toBe(true);
  await outbox.close();
  return { now, secondCreatedAt: later.createdAt };
}

describe('postback held', () => {
  it('lists each problem with its switch; status alerts held-awaiting-decision with the value and deadline', async () => {
    const { now } = await seedHeld();
    const listed = await run(['held', '--db', db.file, '--json']);
    expect(listed.code).toBe(0);
    const { problems, notes } = JSON.parse(listed.out);
    expect(notes).toEqual(['no --base-url: the spend is not read']);
    expect(
      problems.map((p: Record<string, unknown>) => [
        p.account,
        p.campaignId,
        p.count,
        p.valueMicros,
        p.awaitingDecision,
      ]),
    ).toEqual([
      [null, 'cmp_pix', 3, 4_500_000, true],
      ['shop-2', 'cmp_pix', 2, 3_000_000, false],
    ]);
    expect(problems[0].switchSeenAt).toBe(new Date(now + 120_000).toISOString());
    expect(Date.parse(problems[0].earliestDeadline)).toBeGreaterThan(now);
    const text = await run(['held', '--db', db.file]);
    expect(text.out).toContain('AWAITING A DECISION');
    expect(text.out).toContain('cmp_pix (account shop-2): 2 order(s) worth 3.00');

    const status = await run(['status', '--db', db.file, '--json', '--fail-on-paused']);
    expect(status.code).toBe(STATUS_EXIT.paused);
    expect(JSON.parse(status.out).alerts).toEqual(['jobs-held', 'held-awaiting-decision']);
    expect(status.err).toContain('3 held order(s) worth 4.50 await a decision');
    expect(status.err).toContain(`earliest deadline ${problems[0].earliestDeadline}`);
  });

  it('drop cancels one problem with a ledger row each naming who decided; the other is untouched', async () => {
    await seedHeld();
    const dropped = await run([
      'held',
      'drop',
      '--db',
      db.file,
      '--no-account',
      '--campaign',
      'cmp_pix',
      '--as',
      'ana',
    ]);
    expect(dropped.code).toBe(0);
    expect(dropped.out).toContain('held drop: 3 order(s): 0 due now, 3 dropped, 0 expired');
    const ledger = JSON.parse((await run(['ledger', '--db', db.file, '--json'])).out).rows;
    expect(
      ledger
        .filter((r: { kind: string }) => r.kind === 'held-drop')
        .map((r: Record<string, unknown>) => [r.actor, r.account, r.orderId]),
    ).toEqual([
      ['ana', null, 'ord_0'],
      ['ana', null, 'ord_1'],
      ['ana', null, 'ord_2'],
    ]);
    const { problems } = JSON.parse((await run(['held', '--db', db.file, '--json'])).out);
    expect(problems.map((p: { account: string | null }) => p.account)).toEqual(['shop-2']);
    // Nothing left to alert about a decision.
    const status = await run(['status', '--db', db.file, '--json', '--fail-on-paused']);
    expect(JSON.parse(status.out).alerts).toEqual(['jobs-held']);
  });

  it('send --created-before makes only the older orders due now, once; --json names each', async () => {
    const { secondCreatedAt } = await seedHeld();
    const before = new Date(secondCreatedAt).toISOString();
    const sent = await run([
      'held',
      'send',
      '--db',
      db.file,
      '--account',
      'shop-2',
      '--campaign',
      'cmp_pix',
      '--created-before',
      before,
      '--json',
    ]);
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.out).decided).toEqual([
      expect.objectContaining({ decision: 'send', orderId: 'ord_0', state: 'pending', reason: null }),
    ]);
    const outbox = db.open();
    const due = await outbox.claim({ now: Date.now(), limit: 10, leaseMs: 30_000 });
    expect(due.map((job) => [job.account, job.orderId])).toEqual([['shop-2', 'ord_0']]);
    await outbox.close();
  });

  it('refuses what it cannot decide: no campaign, a malformed one, no account, a flag of another action', async () => {
    await seedHeld();
    const cases: Array<[string[], RegExp]> = [
      [['held', 'send', '--db', db.file, '--no-account'], /--campaign/],
      [
        ['held', 'drop', '--db', db.file, '--no-account', '--campaign', 'pix'],
        /--campaign must be cmp_<id> or none/,
      ],
      [['held', 'drop', '--db', db.file, '--campaign', 'cmp_pix'], /--account ID \(or --no-account\)/],
      [['held', '--db', db.file, '--campaign', 'cmp_pix'], /for send and drop/],
      [['held', 'keep', '--db', db.file], /give list, send or drop/],
    ];
    for (const [args, message] of cases) {
      const { code, err } = await run(args);
      expect(code, args.join(' ')).toBe(2);
      expect(err).toMatch(message);
    }
    const { problems } = JSON.parse((await run(['held', '--db', db.file, '--json'])).out);
    expect(problems.map((p: { count: number }) => p.count)).toEqual([3, 2]);
  });
});

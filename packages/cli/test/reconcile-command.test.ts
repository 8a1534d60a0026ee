/**
 * `postback reconcile` against the sandbox's own records: a real worker (the Dispatcher) delivers to a
 * real sandbox with lost answers and answers without a campaign, then reconcile's per-campaign counts
 * and values equal what the sandbox applied (`/_sandbox/conversions`), the orders whose campaign no
 * answer named stand in the unattributed row, and what needs a person is flagged (exit 16).
 */
import { DAY_MS } from '@postback/core';
import { createSqliteOutbox } from '@postback/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReconcileCommand } from '../src/commands/reconcile.ts';
import { defaultContext } from '../src/context.ts';
import { main } from '../src/main.ts';
import { RECONCILE_EXIT_FLAGS } from '../src/specs/reconcile.ts';
import { captureIo } from './capture-io.ts';
import { type DbFixture, dbFixture } from './db-fixture.ts';
import { type ServiceFixture, startRewritingProxy, startService } from './service-fixture.ts';

let db: DbFixture;
let service: ServiceFixture;
const closers: Array<() => Promise<void>> = [];

beforeEach(async () => {
  db = dbFixture();
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await service?.close();
  db.cleanup();
});

/** A sandbox for the test: its return window in days (30 by default). */
async function serve(returnWindowDays?: number): Promise<void> {
  service = await startService(returnWindowDays === undefined ? {} : { returnWindowDays });
}

interface Flag {
  kind: string;
  order_id: string;
  campaign_id: string | null;
  detail: string;
}

/** `reconcile --json` with the read key; the exit code and the report. */
async function reconcileJson(extra: string[] = [], key = service.keys.read) {
  const result = await run(['reconcile', '--db', db.file, '--base-url', service.url, '--json', ...extra], {
    POSTBACK_API_KEY: key,
  });
  const report = JSON.parse(result.out) as {
    campaigns: Row[];
    flags: Flag[];
    notes: string[];
    unattributed: Row;
  };
  return { code: result.code, report, flags: report.flags.map((f) => `${f.kind} ${f.order_id}`).sort() };
}

async function run(args: string[], env: Record<string, string> = {}) {
  const io = captureIo({ env });
  const code = await main(args, io);
  return { code, out: io.out(), err: io.err() };
}

/** `worker --drain` with the conversions key: a real Dispatcher until nothing is due. */
async function drain(fast = true): Promise<void> {
  const tuning = fast ? ['--backoff-base-ms', '20', '--backoff-min-ms', '10', '--backoff-max-ms', '40'] : [];
  const args = [
    'worker',
    '--db',
    db.file,
    '--base-url',
    service.url,
    '--drain',
    '--poll-ms',
    '20',
    ...tuning,
  ];
  const result = await run(args, { POSTBACK_API_KEY: service.keys.conversions });
  expect(result.code, result.err).toBe(0);
}

/** Confirmations of fresh clicks on `campaign`, one per order id, worth 1.01 USD, 1.02 USD, ... */
async function confirm(orders: Array<[string, string]>): Promise<void> {
  const outbox = db.open();
  try {
    for (const [orderId, campaign] of orders) {
      const click = await service.click(campaign);
      const n = Number(orderId.replace(/\D/g, '')) || 0;
      await outbox.confirm({
        orderId,
        valueMicros: 1_000_000 + n * 10_000,
        click: { token: click.token, clickedAt: click.clickedAt },
      });
    }
  } finally {
    await outbox.close();
  }
}

interface Tally {
  count: number;
  value_micros: number;
}
interface Row {
  campaign_id: string;
  delivered: Tally;
  maybe_applied: Tally;
  reversed: Tally;
  reversal_pending: Tally;
  service: { status: string | null; bid_micros: number | null; spend_micros: number | null } | null;
  filtered_clicks: { count: number; amount_micros: number } | null;
}

describe('postback reconcile', () => {
  it("per campaign, equals the sandbox's own records in a run with lost answers and answers without a campaign", async () => {
    await serve();
    const a = await service.campaign('s2s', 1_000_000);
    const b = await service.campaign('s2s', 2_000_000);
    // Answers that carry no campaign: applied, attributed by the sandbox, unknown to us.
    await service.sandbox.control.setVariants(['no-campaign-id']);
    await confirm([
      ['n1', a],
      ['n2', a],
      ['n3', b],
      ['n4', b],
    ]);
    await drain();
    await service.sandbox.control.clearVariants();
    // Half the answers lost: some retried into a delivery (the duplicate's answer names the campaign).
    await service.sandbox.control.setFaults({ reset_after_rate: 0.5 });
    await confirm([
      ['c1', a],
      ['c2', a],
      ['c3', a],
      ['c4', b],
      ['c5', b],
      ['c6', b],
      ['c7', a],
      ['c8', b],
    ]);
    await drain();
    await service.sandbox.control.clearFaults();
    await confirm([
      ['d1', a],
      ['d2', b],
    ]);
    await drain();
    // Returns: one of a delivered order (reversed), one of an order whose campaign nobody knows.
    const outbox = db.open();
    await outbox.refund({ orderId: 'd1' });
    await outbox.refund({ orderId: 'n1' });
    await outbox.close();
    await drain();
    // Last, every answer lost: applied, then the connection is cut; the jobs wait for a retry (the
    // default backoff: after this drain), maybe applied, their campaign unknown.
    await service.sandbox.control.setFaults({ reset_after_rate: 1 });
    await confirm([
      ['l1', a],
      ['l2', b],
      ['l3', b],
    ]);
    await drain(false);
    await service.sandbox.control.clearFaults();
    await service.sandbox.control.recordRefund(a, 'bot traffic', 250_000);
    // Answers with fields and values this version does not know.
    await service.sandbox.control.setVariants(['extra-fields', 'unknown-enums']);

    const result = await run(['reconcile', '--db', db.file, '--base-url', service.url, '--json'], {
      POSTBACK_API_KEY: service.keys.read,
    });
    expect(result.code, result.err).toBe(RECONCILE_EXIT_FLAGS);
    const report = JSON.parse(result.out) as {
      campaigns: Row[];
      unattributed: Row & { orders: Array<{ order_id: string; state: string }> };
      flags: Array<{ kind: string; order_id: string }>;
      notes: string[];
    };
    expect(report.notes).toEqual([]);
    const oracle = (await service.sandbox.control.conversions(service.accountId)).conversions;
    expect(oracle).toHaveLength(17);
    const unattributed = new Set(report.unattributed.orders.map((o) => o.order_id));
    // The four answered without a campaign are unattributed, never guessed into one; so are l1..l3.
    for (const id of ['n1', 'n2', 'n3', 'n4']) expect(unattributed.has(id)).toBe(true);
    expect(report.unattributed.delivered.count).toBe(4);
    expect(report.unattributed.orders.filter((o) => o.state === 'pending').map((o) => o.order_id)).toEqual(
      expect.arrayContaining(['l1', 'l2', 'l3']),
    );
    let attributed = 0;
    for (const campaign of [a, b]) {
      const row = report.campaigns.find((r) => r.campaign_id === campaign) as Row;
      const applied = oracle.filter((c) => c.campaign_id === campaign && !unattributed.has(c.order_id));
      expect(row.delivered.count + row.maybe_applied.count, campaign).toBe(applied.length);
      expect(row.delivered.value_micros + row.maybe_applied.value_micros).toBe(
        applied.reduce((sum, c) => sum + c.value_micros, 0),
      );
      expect(row.reversed.count).toBe(
        oracle.filter((c) => c.campaign_id === campaign && c.state === 'reversed').length,
      );
      // The service's figures, read whatever else the answer carries.
      expect(row.service?.status).toBe('learning');
      expect(row.service?.bid_micros).toBe(campaign === a ? 1_000_000 : 2_000_000);
      expect(row.service?.spend_micros).toBe(
        oracle
          .filter((c) => c.campaign_id === campaign && c.state === 'confirmed')
          .reduce((s, c) => s + c.charged_micros, 0),
      );
      attributed += applied.length;
    }
    expect(attributed + unattributed.size).toBe(oracle.length);
    expect(report.campaigns.find((r) => r.campaign_id === a)?.filtered_clicks).toMatchObject({
      count: 1,
      amount_micros: 250_000,
    });
    expect(report.campaigns.find((r) => r.campaign_id === a)?.reversed).toEqual({
      count: 1,
      value_micros: 1_010_000,
    });
    // The return of an order whose campaign nobody knows needs a person; nothing else does.
    expect(report.flags.map((f) => `${f.kind} ${f.order_id}`)).toEqual(['unattributed-refunded n1']);

    const text = await run(['reconcile', '--db', db.file, '--base-url', service.url], {
      POSTBACK_API_KEY: service.keys.read,
    });
    expect(text.code).toBe(RECONCILE_EXIT_FLAGS);
    expect(text.out).toMatch(new RegExp(`^${a}\\s+-\\s+learning\\s+1\\.00\\s+500\\.00\\s`, 'm'));
    expect(text.out).toMatch(/^unattributed\s+-\s+-\s+-\s+-\s+-\s+4 \(/m);
    expect(text.out).toMatch(
      /^ {2}unattributed-refunded {2}order n1 \(job \d+, decided by dispatcher\): the order was refunded but its campaign is unknown/m,
    );
    expect(text.err).toBe('postback reconcile: 1 flag(s) need a person\n');
    expect(text.out + result.out).not.toContain(service.keys.read);
  }, 60_000);

  it("flags a maybe-applied order past its return window, a reversal ended without the service's word and a dead one; not one the service refused as late", async () => {
    await serve(2 / 86_400); // the service's return window: 2 seconds
    const a = await service.campaign('s2s');
    const b = await service.campaign('s2s');
    await confirm([
      ['w1', a],
      ['r1', a],
      ['h1', a],
    ]);
    await drain();
    // r1's reversal with a configured window long closed: refused at once, nothing written or sent. h1's,
    // in a campaign supplied by hand that never had it: the service answers 404, the job is dead.
    const local = createSqliteOutbox({ filename: db.file, policy: { returnWindowMs: 1_000 } });
    expect((await local.refund({ orderId: 'r1' })).outcome).toBe('window-closed');
    await local.close();
    const byHand = db.open();
    await byHand.refund({ orderId: 'h1', campaignId: b });
    await byHand.close();
    await drain();
    // l1: every answer lost, its deadline 8 s away (room for a slow start on a loaded machine): it ends
    // expired, maybe applied.
    await service.sandbox.control.setFaults({ reset_after_rate: 1 });
    const outbox = db.open();
    const click = await service.click(a);
    const clickedAt = Date.now() - 7 * DAY_MS + 3_600_000 + 8_000;
    await outbox.confirm({ orderId: 'l1', valueMicros: 4_000_000, click: { token: click.token, clickedAt } });
    await outbox.close();
    await drain(false);
    await service.sandbox.control.clearFaults();
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, clickedAt + 7 * DAY_MS - 3_600_000 - Date.now()) + 200),
    );
    // w1's reversal, now past the service's 2-second window: the service says so, the job expires.
    const again = db.open();
    await again.refund({ orderId: 'w1' });
    await again.close();
    await drain();
    const after = db.open();
    expect((await after.getByOrder('l1'))[0]).toMatchObject({
      state: 'expired',
      maybeAppliedAt: expect.any(Number),
    });
    expect((await after.getByOrder('w1'))[1]).toMatchObject({ kind: 'refund', state: 'expired' });
    await after.close();

    const byDefault = await reconcileJson();
    expect(byDefault.code).toBe(RECONCILE_EXIT_FLAGS);
    // The store's window is open-ended by default: l1 is the service's to say.
    expect(byDefault.flags).toEqual(['maybe-applied-open-window l1', 'reversal-dead h1']);
    const dead = byDefault.report.flags.find((f) => f.order_id === 'h1') as Flag;
    expect(dead.campaign_id).toBe(b);
    expect(dead.detail).toMatch(/the reversal is dead: .*404/);
    // Who decided, from the ledger: the dispatcher ended the reversal dead.
    expect((dead as Flag & { decided_by: string | null }).decided_by).toBe('dispatcher');
    // The service's "window closed" is its word: w1 is counted, under its state, and not flagged.
    const row = byDefault.report.campaigns.find((r) => r.campaign_id === a) as Row & {
      reversals_other: Record<string, { count: number }>;
    };
    expect(row.reversals_other.expired?.count).toBe(1); // r1 has no reversal: window-closed wrote nothing

    const closed = await reconcileJson(['--return-window', '1s']);
    expect(closed.flags).toContain('maybe-applied-past-return-window l1');
    const open = await reconcileJson(['--return-window', 'off']);
    expect(open.flags).toContain('maybe-applied-open-window l1');
    expect(open.report.flags.find((f) => f.order_id === 'l1')?.detail).toMatch(/return window is open-ended/);
  }, 60_000);

  it('matches filtered clicks to our orders by click token, and reads answers with missing or unknown fields', async () => {
    await serve();
    const a = await service.campaign('s2s');
    await confirm([
      ['o1', a],
      ['o2', a],
    ]);
    await drain();
    await service.sandbox.control.recordRefund(a, 'duplicate click', 300_000);
    await service.sandbox.control.recordRefund(a, 'bot');
    const outbox = db.open();
    const token = ((await outbox.getByOrder('o1'))[0] as { clickToken: string }).clickToken;
    await outbox.close();
    // A service whose refund records carry the click, whose campaigns lack spend, and with fields of its own.
    const proxy = await startRewritingProxy(service.url, (path, body) => {
      if (path === '/v1/refunds') {
        const { refunds } = body as { refunds: Array<Record<string, unknown>> };
        return {
          refunds: refunds.map((r, i) => ({
            ...r,
            click_token: i === 0 ? token : 'tok_not_ours',
            x_new: [1],
          })),
        };
      }
      if (path === '/v1/campaigns') {
        const { campaigns } = body as { campaigns: Array<Record<string, unknown>> };
        return {
          next: null,
          campaigns: campaigns.map(({ spend_micros: _, ...c }) => ({
            ...c,
            status: 'warming-up',
            x_new: {},
          })),
        };
      }
      return body;
    });
    closers.push(proxy.close);
    const result = await run(['reconcile', '--db', db.file, '--base-url', proxy.url, '--json'], {
      POSTBACK_API_KEY: service.keys.read,
    });
    expect(result.code, result.err).toBe(0);
    const row = (JSON.parse(result.out) as { campaigns: Row[] }).campaigns[0] as Row & {
      filtered_clicks: { matched_orders: number; matched_value_micros: number };
    };
    expect(row.service).toMatchObject({ status: 'warming-up', spend_micros: null, bid_micros: 1_000_000 });
    expect(row.filtered_clicks).toEqual({
      count: 2,
      amount_micros: 300_000 + 1_000_000,
      matched_orders: 1,
      matched_value_micros: 1_010_000,
    });
  });

  it('shows the outbox side with a note when the key may not read, and keeps only recent orders with --since', async () => {
    await serve();
    const a = await service.campaign('s2s');
    await confirm([['o1', a]]);
    await drain();
    const noRead = await reconcileJson([], service.keys.conversions);
    expect(noRead.code).toBe(0);
    expect(noRead.report.notes).toEqual([
      expect.stringMatching(
        /GET \/v1\/campaigns with POSTBACK_API_KEY was refused \(403: .*\): reconcile needs a key with the read scope/,
      ),
    ]);
    expect(noRead.report.campaigns).toMatchObject([
      { campaign_id: a, delivered: { count: 1 }, service: null },
    ]);

    // Two hours on, the order of a moment ago is not in the last hour.
    const later = createReconcileCommand({ ...defaultContext, now: () => Date.now() + 2 * 3_600_000 });
    const io = captureIo({ env: { POSTBACK_API_KEY: service.keys.read } });
    expect(await later.run(['--db', db.file, '--base-url', service.url, '--json', '--since', '1h'], io)).toBe(
      0,
    );
    const recent = JSON.parse(io.out()) as { since: string; campaigns: Row[] };
    expect(recent.campaigns).toMatchObject([
      { campaign_id: a, delivered: { count: 0 }, service: { bid_micros: 1_000_000 } },
    ]);
    expect(Date.parse(recent.since)).toBeGreaterThan(Date.now());
  });

  it('refuses an SQS outbox and a run without a key (exit 2), and exits 3 when the service cannot be reached', async () => {
    await serve();
    await db.open().close();
    const sqs = await run(
      ['reconcile', '--sqs', 'http://127.0.0.1:1/000000000000/q', '--base-url', service.url],
      {
        POSTBACK_API_KEY: service.keys.read,
      },
    );
    expect(sqs.code).toBe(2);
    const noKey = await run(['reconcile', '--db', db.file, '--base-url', service.url]);
    expect(noKey.code).toBe(2);
    expect(noKey.err).toMatch(/set POSTBACK_API_KEY to a key with the read scope/);
    const down = await run(['reconcile', '--db', db.file, '--base-url', 'http://127.0.0.1:1'], {
      POSTBACK_API_KEY: service.keys.read,
    });
    expect(down.code).toBe(3);
    expect(down.err).toMatch(/the ad service could not be read/);
  });
});

/**
 * Advertiser accounts on SQS, over real HTTP to the SQS emulator: the account in the body, the FIFO ids and
 * the ledger key (the same order id in two accounts is two orders; jobs without an account keep today's
 * format), fair-queue groups on standard queues, jobs of excluded accounts parked (hidden, held for a later
 * claim), and the dead letters' account filter.
 */
import { type Job, JobValidationError, OptionsError } from '@postback/core';
import { afterEach, describe, expect, test } from 'vitest';
import {
  createMemoryOrderLedger,
  type OrderLedger,
  type OrderRecord,
  orderLedgerKey,
  type SqsOutbox,
} from '../src/index.ts';
import { decodeJobBody, messageGroupIdOf } from '../src/message-codec.ts';
import { ACCOUNT_ATTRIBUTE } from '../src/outbox-context.ts';
import { type Harness, startHarness } from './harness.ts';

let h: Harness;
afterEach(async () => h?.close());

const LEASE = 30_000;
const input = (orderId: string, account?: string) => ({
  orderId,
  valueMicros: 1_000,
  click: { token: `tok_${orderId}_${account ?? 'none'}`, clickedAt: h.sqs.now() - 60_000 },
  ...(account === undefined ? {} : { account }),
});
const claim = (outbox: SqsOutbox, excludeAccounts?: (string | null)[], limit = 10) =>
  outbox.claim({ now: h.sqs.now(), limit, leaseMs: LEASE, ...(excludeAccounts ? { excludeAccounts } : {}) });
const sends = () =>
  h.sqs.calls.filter((c) => c.operation === 'SendMessage').map((c) => c.input as Record<string, unknown>);
const messageOf = (orderId: string, account: string | null) =>
  h.sqs.messages(h.queueUrl).find((m) => {
    const body = decodeJobBody(m.body);
    return body.orderId === orderId && body.account === account;
  });

describe('the account on the wire', () => {
  test('FIFO: the same order id in two accounts is two groups and two deduplication ids; no account keeps today’s', async () => {
    h = startHarness();
    const outbox = h.outbox();
    await outbox.confirm(input('A-1', 'shop-a'));
    await outbox.confirm(input('A-1', 'shop-b'));
    await outbox.confirm(input('A-1'));
    // Within SQS's 5-minute deduplication interval, none of the three was dropped.
    expect(h.sqs.messages(h.queueUrl)).toHaveLength(3);
    const [a, b, none] = sends();
    expect(none).toMatchObject({ MessageGroupId: 'o:A-1', MessageDeduplicationId: 'c:o:A-1' });
    expect(a?.MessageGroupId).toBe(messageGroupIdOf('A-1', 'shop-a'));
    expect(a?.MessageGroupId).not.toBe(b?.MessageGroupId);
    expect(a?.MessageDeduplicationId).toBe(`c:${messageGroupIdOf('A-1', 'shop-a')}`);
    expect(messageOf('A-1', 'shop-a')?.attributes[ACCOUNT_ATTRIBUTE]).toEqual({
      DataType: 'String',
      StringValue: 'shop-a',
    });
    expect(messageOf('A-1', null)?.attributes[ACCOUNT_ATTRIBUTE]).toBeUndefined();
  });

  test('standard queue: MessageGroupId is the account (SQS fair queues), one fixed group without one; off with fairQueueGroups: false', async () => {
    h = startHarness({ standard: true });
    const outbox = h.outbox();
    await outbox.confirm(input('A-1', 'shop-17'));
    await outbox.confirm(input('A-2'));
    await outbox.confirmMany([input('A-3', 'shop-18'), input('A-4')]);
    expect(sends().map((s) => s.MessageGroupId)).toEqual(['a:shop-17', 'none']);
    const batch = h.sqs.calls.find((c) => c.operation === 'SendMessageBatch')?.input as {
      Entries: Array<Record<string, unknown>>;
    };
    expect(batch.Entries.map((e) => e.MessageGroupId)).toEqual(['a:shop-18', 'none']);
    expect(sends().every((s) => s.MessageDeduplicationId === undefined)).toBe(true);

    const plain = h.outbox({ fairQueueGroups: false });
    await plain.confirm(input('A-5', 'shop-17'));
    expect(sends().at(-1)?.MessageGroupId).toBeUndefined();
    const claimed = await claim(outbox, undefined, 10);
    expect(new Map(claimed.map((j) => [j.orderId, j.account]))).toEqual(
      new Map([
        ['A-1', 'shop-17'],
        ['A-2', null],
        ['A-3', 'shop-18'],
        ['A-4', null],
        ['A-5', 'shop-17'],
      ]),
    );
  });

  test('a message written in today’s format (no account) is claimed as account null', async () => {
    h = startHarness();
    const outbox = h.outbox();
    const now = h.sqs.now();
    const body = JSON.stringify({
      v: 1,
      id: 'c-old',
      orderId: 'A-1',
      createdAt: now,
      deadline: now + 86_400_000,
      campaignId: null,
      kind: 'confirm',
      clickToken: 'tok_old',
      valueMicros: 1_000,
      clickedAt: now - 60_000,
    });
    h.sqs.inject(h.queueUrl, body, { groupId: 'o:A-1' });
    const [job] = await claim(outbox);
    expect(job).toMatchObject({ id: 'c-old', orderId: 'A-1', account: null });
  });
});

describe('the order ledger', () => {
  /** A ledger as written before accounts existed: records without `account`, keyed by order id. */
  function oldLedger(): { ledger: OrderLedger; records: Map<string, OrderRecord> } {
    const records = new Map<string, OrderRecord>();
    return {
      records,
      ledger: {
        async get(key) {
          return structuredClone(records.get(key) ?? { confirm: null, refund: null });
        },
        async put(job, key) {
          const record = records.get(key) ?? { confirm: null, refund: null };
          records.set(key, { ...record, [job.kind]: structuredClone(job) } as OrderRecord);
        },
      },
    };
  }

  test('is keyed by account and order id; without an account the key is the order id, as before', async () => {
    expect(orderLedgerKey('A-1', null)).toBe('A-1');
    expect(orderLedgerKey('A-1', 'shop-a')).toBe('shop-a\u001fA-1');
    h = startHarness();
    const { ledger, records } = oldLedger();
    const outbox = h.outbox({ ledger });
    await outbox.confirm(input('A-1', 'shop-a'));
    await outbox.confirm(input('A-1'));
    expect([...records.keys()].sort()).toEqual(['A-1', 'shop-a\u001fA-1']);
    expect(await outbox.confirm(input('A-1', 'shop-a'))).toMatchObject({
      created: false,
      job: { account: 'shop-a' },
    });
    expect(await outbox.confirm(input('A-1', 'shop-b'))).toMatchObject({ created: true });
    expect((await outbox.getByOrder('A-1', 'shop-a')).map((j) => j.account)).toEqual(['shop-a']);
    expect((await outbox.getByOrder('A-1')).map((j) => j.account)).toEqual([null]);
    expect(await outbox.getByOrder('A-1', 'shop-z')).toEqual([]);
    await expect(outbox.getByOrder('A-1', '')).rejects.toBeInstanceOf(JobValidationError);
  });

  test('a record written in today’s format (no account field) reads as account null', async () => {
    h = startHarness();
    const { ledger, records } = oldLedger();
    const now = h.sqs.now();
    const { account: _dropped, ...before } = {
      kind: 'confirm' as const,
      id: 'c-old',
      orderId: 'A-1',
      account: null,
      state: 'delivered' as const,
      attempts: 1,
      createdAt: now,
      updatedAt: now,
      nextAttemptAt: now,
      deadline: now + 86_400_000,
      lastError: null,
      lease: null,
      deliveredAt: now,
      campaignId: 'cmp_7',
      maybeAppliedAt: null,
      clickToken: 'tok_old',
      valueMicros: 1_000,
      clickedAt: now - 60_000,
    };
    records.set('A-1', { confirm: before as unknown as OrderRecord['confirm'], refund: null });
    const outbox = h.outbox({ ledger });
    expect(await outbox.getByOrder('A-1')).toEqual([{ ...before, account: null }]);
    expect(await outbox.confirm(input('A-1'))).toMatchObject({
      created: false,
      job: { id: 'c-old', account: null },
    });
    // The refund finds the campaign the old record carries, and is an order without an account.
    expect(await outbox.refund({ orderId: 'A-1' })).toMatchObject({
      outcome: 'enqueued',
      job: { account: null, campaignId: 'cmp_7' },
    });
    // The same order id in an account is another order, which the old record does not answer for.
    expect(await outbox.getByOrder('A-1', 'shop-a')).toEqual([]);
  });
});

describe('excluded accounts', () => {
  test('a job of an excluded account is hidden for excludedAccountDelaySeconds and handed to a later claim, its attempt counted once', async () => {
    h = startHarness();
    const outbox = h.outbox({ ledger: createMemoryOrderLedger(), excludedAccountDelaySeconds: 120 });
    await outbox.confirm(input('A-1', 'shop-a'));
    await outbox.confirm(input('A-2', 'shop-b'));
    const first = await claim(outbox, ['shop-a']);
    expect(first.map((j) => j.account)).toEqual(['shop-b']);
    const parked = messageOf('A-1', 'shop-a');
    expect(parked?.visibleAt).toBe(h.sqs.now() + 120_000);
    // Still excluded: not handed out, and not received again.
    expect(await claim(outbox, ['shop-a'])).toEqual([]);
    expect(parked?.receiveCount).toBe(1);
    h.sqs.advance(30_000);
    const [later] = await claim(outbox);
    expect(later).toMatchObject({ orderId: 'A-1', account: 'shop-a', attempts: 1 });
    expect(later?.lease?.expiresAt).toBe(h.sqs.now() + LEASE);
    expect(parked?.visibleAt).toBe(h.sqs.now() + LEASE);
    expect(await outbox.complete(later as Job, { now: h.sqs.now(), campaignId: 'cmp_1' })).toBe(true);
  });

  test('null excludes the jobs without an account', async () => {
    h = startHarness();
    const outbox = h.outbox();
    await outbox.confirm(input('A-1'));
    await outbox.confirm(input('A-2', 'shop-b'));
    expect((await claim(outbox, [null])).map((j) => j.account)).toEqual(['shop-b']);
    expect((await claim(outbox)).map((j) => j.account)).toEqual([null]);
  });

  test('a parked job whose hiding is half gone comes back through the queue: receive count grown, not mistaken for maybe applied', async () => {
    h = startHarness();
    const outbox = h.outbox({ ledger: createMemoryOrderLedger() });
    await outbox.confirm(input('A-1', 'shop-a'));
    expect(await claim(outbox, ['shop-a'])).toEqual([]);
    h.sqs.advance(31_000);
    expect(await claim(outbox)).toEqual([]);
    h.sqs.advance(30_000);
    const [again] = await claim(outbox);
    expect(again).toMatchObject({ orderId: 'A-1', attempts: 2, maybeAppliedAt: null });
  });

  test('a parked job handed out whose worker then dies is maybe applied at the next receive', async () => {
    h = startHarness();
    const outbox = h.outbox({ ledger: createMemoryOrderLedger() });
    await outbox.confirm(input('A-1', 'shop-a'));
    await claim(outbox, ['shop-a']);
    h.sqs.advance(1_000);
    const handedOutAt = h.sqs.now();
    const [held] = await claim(outbox);
    expect(held?.attempts).toBe(1);
    h.sqs.advance(LEASE); // no outcome recorded
    const [retaken] = await claim(outbox);
    expect(retaken).toMatchObject({ attempts: 2, maybeAppliedAt: handedOutAt });
  });

  test('a claim stops receiving after a round that gave only excluded jobs', async () => {
    h = startHarness({ standard: true });
    const outbox = h.outbox();
    await outbox.confirmMany(Array.from({ length: 25 }, (_, i) => input(`B-${i}`, 'big')));
    await outbox.confirm(input('S-1', 'small'));
    expect(await claim(outbox, ['big'], 10)).toEqual([]);
    expect(h.sqs.calls.filter((c) => c.operation === 'ReceiveMessage')).toHaveLength(1);
    // The ten received were sent again, hidden for the delay, and their received copies deleted.
    const messages = h.sqs.messages(h.queueUrl);
    expect(messages).toHaveLength(26);
    expect(messages.filter((m) => m.visibleAt > h.sqs.now())).toHaveLength(10);
  });

  test('on a standard queue a parked job is sent again with a delay: waiting out a pause counts no receive', async () => {
    h = startHarness({ standard: true });
    const outbox = h.outbox({ ledger: createMemoryOrderLedger(), excludedAccountDelaySeconds: 60 });
    await outbox.confirm(input('A-1', 'shop-a'));
    for (let round = 0; round < 5; round++) {
      expect(await claim(outbox, ['shop-a'])).toEqual([]);
      const [message] = h.sqs.messages(h.queueUrl);
      expect(message).toMatchObject({ receiveCount: 0, visibleAt: h.sqs.now() + 60_000 });
      h.sqs.advance(60_000);
    }
    const [job] = await claim(outbox);
    expect(job).toMatchObject({ orderId: 'A-1', account: 'shop-a', attempts: 1, maybeAppliedAt: null });
  });

  test('excludedAccountDelaySeconds is 1–900', () => {
    h = startHarness();
    for (const bad of [0, 901, 1.5]) {
      const err = (() => {
        try {
          h.outbox({ excludedAccountDelaySeconds: bad });
          return null;
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(OptionsError);
      expect((err as OptionsError).field).toBe('excludedAccountDelaySeconds');
    }
  });
});

describe('dead letters', () => {
  test('keep the account; listJobs filters by it (null: jobs without one)', async () => {
    h = startHarness();
    const outbox = h.outbox();
    await outbox.confirm(input('A-1', 'shop-a'));
    await outbox.confirm(input('A-1', 'shop-b'));
    await outbox.confirm(input('A-2'));
    for (const job of await claim(outbox))
      expect(await outbox.fail(job, { now: h.sqs.now(), state: 'dead', reason: 'HTTP 422' })).toBe(true);
    const orders = (jobs: Job[]) => jobs.map((j) => `${j.orderId}@${j.account}`).sort();
    expect(orders(await outbox.listJobs({ account: 'shop-a' }))).toEqual(['A-1@shop-a']);
    expect(orders(await outbox.listJobs({ account: null }))).toEqual(['A-2@null']);
    expect(orders(await outbox.listDead())).toEqual(['A-1@shop-a', 'A-1@shop-b', 'A-2@null']);
    await expect(outbox.listJobs({ account: '' })).rejects.toBeInstanceOf(JobValidationError);
    const letter = h.sqs
      .messages(h.dlqUrl)
      .find((m) => decodeJobBody(m.body).account === 'shop-b' && m.groupId !== undefined);
    expect(letter?.attributes[ACCOUNT_ATTRIBUTE]?.StringValue).toBe('shop-b');
  });
});

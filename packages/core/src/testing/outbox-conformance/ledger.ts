/**
 * Conformance tests: the ledger of every hand on the money. Final money states write one row each, in the
 * transition (a raced transition writes none); operator actions append one; `prune` never removes a row
 * younger than the ledger's retention; rows are never updated.
 */
import { describe, expect } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import type { LedgerInput } from '../../queue/ledger-types.ts';
import { HOUR, LEASE_MS, type Suite } from './suite.ts';

export function describeLedger(s: Suite): void {
  const { enqueue, claimAll, claimOne, deliver, killConfirm, expectValidation, has, test } = s;
  const kinds = async () => (await s.outbox.readLedger()).map((row) => [row.kind, row.orderId, row.actor]);
  const action = (overrides: Partial<LedgerInput> = {}): LedgerInput => ({
    actor: 'ana',
    kind: 'replay',
    at: s.clock.now(),
    jobId: null,
    orderId: 'ord_1',
    account: null,
    valueMicros: null,
    reason: null,
    ...overrides,
  });

  describe('ledger', () => {
    test(
      'a delivered confirm and a dead one each write one final-state row by the dispatcher',
      async () => {
        const delivered = await deliver('ord_1');
        await killConfirm('ord_2', 'HTTP 422: unknown click token');
        const rows = await s.outbox.readLedger();
        expect(rows.map((row) => [row.kind, row.orderId, row.actor])).toEqual([
          ['applied', 'ord_1', 'dispatcher'],
          ['dead', 'ord_2', 'dispatcher'],
        ]);
        expect(rows[0]).toMatchObject({ jobId: delivered.id, valueMicros: 12_340_000, reason: null });
        expect(rows[1]?.reason).toBe('HTTP 422: unknown click token');
        expect(rows[1]?.seq).toBeGreaterThan(rows[0]?.seq as number);
      },
      'ledger',
    );

    test(
      'a delivered refund writes a reversed row and an expired confirm an expired row',
      async () => {
        await deliver('ord_1');
        await s.outbox.refund({ orderId: 'ord_1' });
        const refund = await claimOne();
        expect(await s.outbox.complete(refund, { now: s.clock.now(), campaignId: 'cmp_77' })).toBe(true);
        await enqueue('ord_2');
        const late = await claimOne();
        await s.outbox.fail(late, { now: s.clock.now(), state: 'expired', reason: 'deadline passed' });
        expect((await kinds()).map(([kind]) => kind)).toEqual(['applied', 'reversed', 'expired']);
      },
      'ledger',
    );

    test(
      'a transition raced by two workers writes exactly one row',
      async () => {
        await enqueue('ord_1');
        const first = await claimOne();
        s.clock.advance(LEASE_MS + 1);
        const [second] = await claimAll();
        const results = await Promise.all([
          s.outbox.complete(first, { now: s.clock.now(), campaignId: 'cmp_1' }),
          s.outbox.complete(second ?? first, { now: s.clock.now(), campaignId: 'cmp_1' }),
          s.outbox.fail(first, { now: s.clock.now(), state: 'dead', reason: 'late' }),
        ]);
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await kinds()).toEqual([['applied', 'ord_1', 'dispatcher']]);
      },
      'ledger',
    );

    test(
      'replay of a dead job past its deadline writes an expired row; a replay that sends writes none',
      async () => {
        const job = await killConfirm('ord_1');
        await killConfirm('ord_2');
        await s.outbox.replay({ all: true }, s.clock.now());
        expect((await kinds()).map(([kind]) => kind)).toEqual(['dead', 'dead']);
        s.clock.set((job.deadline as number) + 1);
        const [again] = await claimAll();
        await s.outbox.fail(again as never, { now: s.clock.now(), state: 'dead', reason: 'x' });
        await s.outbox.replay({ all: true }, s.clock.now());
        expect((await kinds()).map(([kind]) => kind)).toEqual(['dead', 'dead', 'dead', 'expired']);
      },
      'ledger',
    );

    test(
      'an operator action appends one row, returned with its sequence number, its reason redacted',
      async () => {
        const stored = await s.outbox.appendLedger(
          action({ kind: 'purge', reason: 'purged; key was Bearer pbsk_secret123', valueMicros: 5_000_000 }),
        );
        expect(stored).toMatchObject({ actor: 'ana', kind: 'purge', valueMicros: 5_000_000 });
        expect(stored.reason).not.toContain('pbsk_secret123');
        expect(await s.outbox.readLedger()).toEqual([stored]);
      },
      'ledger',
    );

    test(
      'readLedger filters by order, account and time and honours its limit',
      async () => {
        const t0 = s.clock.now();
        await s.outbox.appendLedger(action({ orderId: 'ord_1', account: 'shop_a' }));
        s.clock.advance(HOUR);
        await s.outbox.appendLedger(action({ orderId: 'ord_2', account: 'shop_b', at: s.clock.now() }));
        await s.outbox.appendLedger(action({ orderId: 'ord_1', account: 'shop_b', at: s.clock.now() }));
        const orders = async (query: Parameters<typeof s.outbox.readLedger>[0]) =>
          (await s.outbox.readLedger(query)).map((row) => `${row.account}/${row.orderId}`);
        expect(await orders({ orderId: 'ord_1' })).toEqual(['shop_a/ord_1', 'shop_b/ord_1']);
        expect(await orders({ account: 'shop_b' })).toEqual(['shop_b/ord_2', 'shop_b/ord_1']);
        expect(await orders({ since: t0 + 1 })).toEqual(['shop_b/ord_2', 'shop_b/ord_1']);
        expect(await orders({ limit: 1 })).toEqual(['shop_a/ord_1']);
      },
      'ledger',
    );

    test(
      'a bad ledger row is refused naming its field',
      async () => {
        await expectValidation(s.outbox.appendLedger(action({ actor: '' })), 'ledger.actor');
        await expectValidation(s.outbox.appendLedger(action({ kind: 'steal' as never })), 'ledger.kind');
        await expectValidation(s.outbox.appendLedger(action({ valueMicros: 1.5 })), 'ledger.valueMicros');
        await expectValidation(s.outbox.readLedger({ limit: 0 }), 'limit');
        expect(await s.outbox.readLedger()).toEqual([]);
      },
      'ledger',
    );

    test(
      'prune removes the final jobs but never a ledger row younger than the ledger retention',
      async () => {
        await deliver('ord_1');
        await killConfirm('ord_2');
        await s.outbox.appendLedger(action({ orderId: 'ord_2', kind: 'purge' }));
        await s.outbox.purgeDead();
        s.clock.advance(60 * DAY_MS);
        const rules = { olderThanMs: DAY_MS, returnWindowMs: 14 * DAY_MS };
        expect(await s.outbox.prune({ now: s.clock.now(), ...rules })).toBe(1);
        expect((await kinds()).map(([kind]) => kind)).toEqual(['applied', 'dead', 'purge']);
        s.clock.advance(400 * DAY_MS);
        await s.outbox.prune({ now: s.clock.now(), ...rules, ledgerRetentionMs: 500 * DAY_MS });
        expect(await kinds()).toHaveLength(3);
        await s.outbox.prune({ now: s.clock.now(), ...rules });
        expect(await kinds()).toEqual([]);
      },
      'ledger',
      'prune',
    );

    if (!has('ledger'))
      test('a store without a ledger reads it as empty and says so in its features', async () => {
        await deliver('ord_1');
        expect(s.outbox.features.ledger).toBe(false);
        expect(await s.outbox.readLedger()).toEqual([]);
      });
  });
}

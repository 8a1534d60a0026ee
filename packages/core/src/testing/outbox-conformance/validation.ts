/** Conformance tests: malformed confirms and refunds are refused with a `JobValidationError` and store nothing. */
import { describe, expect } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import type { ConfirmInput } from '../../queue/types.ts';
import type { Suite } from './suite.ts';

export function describeValidation(s: Suite): void {
  const { confirmInput, claimAll, expectValidation, has, test } = s;
  describe('validation', () => {
    test('rejects a malformed confirm with a JobValidationError naming the field, and stores nothing', async () => {
      const cases: Array<[string, Partial<ConfirmInput> | Record<string, unknown>]> = [
        ['orderId', { orderId: '' }],
        ['orderId', { orderId: 'x'.repeat(256) }],
        ['orderId', { orderId: 'ord\u0000' }],
        ['valueMicros', { valueMicros: 12.5 }],
        ['valueMicros', { valueMicros: -1 }],
        ['valueMicros', { valueMicros: '12.34' }],
        ['click.token', { click: { token: 'has space', clickedAt: s.clock.now() } }],
        ['click.token', { click: { token: '', clickedAt: s.clock.now() } }],
        ['click.clickedAt', { click: { token: 'tok_ok', clickedAt: Number.NaN } }],
        ['click.clickedAt', { click: { token: 'tok_ok', clickedAt: s.clock.now() + DAY_MS } }],
      ];
      for (const [field, patch] of cases) {
        await expectValidation(
          s.outbox.confirm({ ...confirmInput('ord_bad'), ...patch } as ConfirmInput),
          field,
        );
      }
      expect(await claimAll()).toEqual([]);
      if (has('lookup')) expect(await s.outbox.getByOrder('ord_bad')).toEqual([]);
      if (has('exactStats')) expect((await s.outbox.stats(s.clock.now())).counts.pending).toBe(0);
    });

    test('rejects a malformed refund with a JobValidationError naming the field, and stores nothing', async () => {
      await expectValidation(s.outbox.refund({ orderId: '' }), 'orderId');
      await expectValidation(s.outbox.refund({ orderId: 'ord_r', campaignId: 'campaign-7' }), 'campaignId');
      s.clock.advance(DAY_MS);
      expect(await claimAll()).toEqual([]);
      if (has('lookup')) expect(await s.outbox.getByOrder('ord_r')).toEqual([]);
    });

    test('refuses a refund without campaignId when it holds no confirmation for the order', async () => {
      await expectValidation(s.outbox.refund({ orderId: 'ord_unknown' }), 'campaignId');
      expect(await claimAll()).toEqual([]);
    });
  });
}

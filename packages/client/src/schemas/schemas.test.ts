/**
 * The wire schemas on their own (the sandbox imports them too): micros only as non-negative safe integers,
 * http(s) URLs only, responses keep unknown fields and reject wrong types.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { campaign, confirmation, creative } from '../../test/helpers/fixtures.ts';
import {
  campaignIdSchema,
  campaignSchema,
  conversionConfirmationSchema,
  conversionConfirmSchema,
  creativeSchema,
  httpUrlSchema,
  microsSchema,
} from '../index.ts';

describe('wire schemas', () => {
  it('microsSchema accepts exactly the non-negative safe integers', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer(), fc.maxSafeInteger(), fc.constant(2 ** 53)), (n) => {
        const ok = Number.isSafeInteger(n) && n >= 0;
        expect(microsSchema.safeParse(n).success).toBe(ok);
      }),
      { numRuns: 2_000 },
    );
  });

  it('httpUrlSchema accepts http and https URLs only', () => {
    for (const good of ['https://shop.example/a?b=1', 'http://127.0.0.1:3000/x'])
      expect(httpUrlSchema.safeParse(good).success).toBe(true);
    for (const bad of [
      'ftp://shop.example/',
      'javascript:alert(1)',
      'shop.example/landing',
      '',
      'data:text/html,hi',
    ]) {
      expect(httpUrlSchema.safeParse(bad).success).toBe(false);
    }
  });

  it('campaignIdSchema takes cmp_<id> and nothing else', () => {
    expect(campaignIdSchema.safeParse('cmp_3kq8v0c1x9ab').success).toBe(true);
    for (const bad of ['cmp_', 'CMP_1', 'site_1', 'cmp_a b', ' cmp_1', 42])
      expect(campaignIdSchema.safeParse(bad).success).toBe(false);
  });

  it('a creative defaults its format to card', () => {
    const { format, ...rest } = creative;
    expect(creativeSchema.parse(rest).format).toBe(format);
  });

  it('request bodies reject unknown keys while responses keep them', () => {
    expect(
      conversionConfirmSchema.safeParse({ click_token: 't', order_id: 'o', value_micros: 1, extra: 1 })
        .success,
    ).toBe(false);
    expect(
      conversionConfirmationSchema.parse({ ...confirmation, attribution: 'last_click' }).attribution,
    ).toBe('last_click');
  });

  it('a campaign response requires its id, types its known fields when present and allows null budgets', () => {
    expect(
      campaignSchema.parse({ ...campaign, pricing_model: 'cross_promo', total_budget_micros: null })
        .total_budget_micros,
    ).toBeNull();
    expect(campaignSchema.safeParse({ ...campaign, spend_micros: '0' }).success).toBe(false);
    expect(campaignSchema.safeParse({ ...campaign, id: 42 }).success).toBe(false);
    const { id: _id, ...withoutId } = campaign;
    expect(campaignSchema.safeParse(withoutId).success).toBe(false);
    // Only the id is acted on: every other field may be missing, and a timestamp is kept as sent.
    expect(campaignSchema.parse({ id: 'cmp_1' })).toEqual({ id: 'cmp_1' });
    expect(campaignSchema.parse({ ...campaign, created_at: 'yesterday' }).created_at).toBe('yesterday');
  });
});

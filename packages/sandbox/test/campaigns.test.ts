/**
 * Campaign rules: review on creation, budget held from the prepaid balance, 402 when the available
 * balance is too low, cross_promo paid in credit with no cash budget, segments only from the listing,
 * and the plan's figures.
 */
import { describe, expect } from 'vitest';
import { campaignBody, DAY_S, raw, test } from './fixtures.ts';

describe('POST /v1/campaigns', () => {
  test('creates a campaign in review with the wire fields, listed only for its own account', async ({
    newAccount,
  }) => {
    const acct = await newAccount();
    const other = await newAccount();
    const created = await acct.write.campaigns.create(campaignBody());
    expect(created).toMatchObject({
      id: expect.stringMatching(/^cmp_[a-z0-9]+$/),
      status: 'review',
      pricing_model: 'cpa',
      bid_micros: 2_000_000,
      total_budget_micros: 50_000_000,
      daily_cap_micros: null,
      spend_micros: 0,
      conversion_source: 's2s',
      target_categories: [],
      creatives: [
        expect.objectContaining({ format: 'card', landing_url: 'https://shop.example/shoes?ref=ad' }),
      ],
    });
    expect((await acct.read.campaigns.list()).campaigns).toEqual([created]);
    expect((await other.read.campaigns.list()).campaigns).toEqual([]);
  });

  test('holds the budget from the prepaid balance at creation', async ({ sandbox, newAccount }) => {
    const acct = await newAccount({ balance_micros: 80_000_000 });
    await acct.write.campaigns.create(campaignBody({ total_budget_micros: 30_000_000 }));
    expect(await sandbox.control.account(acct.accountId)).toMatchObject({
      balance_micros: 50_000_000,
      held_micros: 30_000_000,
    });
  });

  test('answers 402 when the available balance is too low, and holds nothing', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount({ balance_micros: 60_000_000 });
    await acct.write.campaigns.create(campaignBody({ total_budget_micros: 40_000_000 }));
    const err = await acct.write.campaigns
      .create(campaignBody({ total_budget_micros: 20_000_001 }))
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 402, detail: expect.stringContaining('balance too low') });
    expect(await sandbox.control.account(acct.accountId)).toMatchObject({
      balance_micros: 20_000_000,
      held_micros: 40_000_000,
    });
    // Exactly the available balance is enough.
    await expect(
      acct.write.campaigns.create(campaignBody({ total_budget_micros: 20_000_000 })),
    ).resolves.toMatchObject({ status: 'review' });
    expect((await acct.read.campaigns.list()).campaigns).toHaveLength(2);
  });

  test('a cross_promo campaign is paid in credit: no cash budget and no balance held', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount({ balance_micros: 5_000_000, credit_micros: 3_000_000 });
    const campaign = await acct.write.campaigns.create(
      campaignBody({ pricing_model: 'cross_promo', bid_micros: 1_000_000, total_budget_micros: null }),
    );
    expect(campaign).toMatchObject({ total_budget_micros: null, daily_cap_micros: null, status: 'review' });
    expect(await sandbox.control.account(acct.accountId)).toMatchObject({
      balance_micros: 5_000_000,
      held_micros: 0,
    });
  });

  test('a cross_promo campaign with a cash budget is refused with 422', async ({ newAccount }) => {
    const acct = await newAccount({ credit_micros: 3_000_000 });
    const err = await acct.write.campaigns
      .create(
        campaignBody({ pricing_model: 'cross_promo', bid_micros: 1_000_000, total_budget_micros: 1_000_000 }),
      )
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 422, detail: expect.stringContaining('cross_promo') });
  });

  test('a cross_promo campaign without enough credit for one bid is refused with 402', async ({
    newAccount,
  }) => {
    const acct = await newAccount({ credit_micros: 999_999 });
    await expect(
      acct.write.campaigns.create(
        campaignBody({ pricing_model: 'cross_promo', bid_micros: 1_000_000, total_budget_micros: null }),
      ),
    ).rejects.toMatchObject({ status: 402 });
  });

  test('a cash campaign without total_budget_micros is refused with 400 naming the field', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { total_budget_micros, ...body } = campaignBody();
    const res = await raw(sandbox, 'POST', '/v1/campaigns', { key: acct.keys.write, body });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ detail: 'total_budget_micros: is required for pricing model cpa' });
  });

  test('a daily cap above the total budget is refused with 422', async ({ newAccount }) => {
    const acct = await newAccount();
    await expect(
      acct.write.campaigns.create(campaignBody({ total_budget_micros: 10, daily_cap_micros: 11 })),
    ).rejects.toMatchObject({ status: 422 });
  });

  test('target and exclude segments must be labels GET /v1/segments lists', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    await expect(
      acct.write.campaigns.create(campaignBody({ target_segments: ['runners'] })),
    ).rejects.toMatchObject({
      status: 422,
      detail: expect.stringContaining("target_segments.0: segment 'runners'"),
    });
    await sandbox.control.recordPageviews('runners', 100);
    await expect(
      acct.write.campaigns.create(campaignBody({ target_segments: ['runners'] })),
    ).resolves.toMatchObject({
      target_segments: ['runners'],
    });
    await expect(
      acct.write.campaigns.create(
        campaignBody({ target_segments: ['runners'], exclude_segments: ['runners'] }),
      ),
    ).rejects.toMatchObject({ status: 422 });
    await sandbox.control.advanceClock(7 * DAY_S);
    await expect(
      acct.write.campaigns.create(campaignBody({ exclude_segments: ['runners'] })),
    ).rejects.toMatchObject({ status: 422 });
  });
});

describe('POST /v1/campaigns/plan', () => {
  test('returns the starting bid, a forecast and the reserve that creation would hold', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const plan = await acct.read.campaigns.plan({ total_budget_micros: 10_000_000, pricing_model: 'cpc' });
    expect(plan).toEqual({
      starting_bid_micros: 500_000,
      reach_forecast: { impressions: 1_000, clicks: 20 },
      reserve_micros: 10_000_000,
    });
    await acct.write.campaigns.create(
      campaignBody({ pricing_model: 'cpc', total_budget_micros: 10_000_000 }),
    );
    expect((await sandbox.control.account(acct.accountId)).held_micros).toBe(plan.reserve_micros);
    expect(
      (await acct.read.campaigns.plan({ total_budget_micros: 10_000_000, pricing_model: 'cross_promo' }))
        .reserve_micros,
    ).toBe(0);
  });

  test('a bigger budget never forecasts less reach', async ({ newAccount }) => {
    const acct = await newAccount();
    for (const pricing_model of ['cpc', 'cpm', 'cpa', 'affiliate', 'guaranteed', 'cross_promo'] as const) {
      const small = await acct.read.campaigns.plan({ total_budget_micros: 5_000_000, pricing_model });
      const big = await acct.read.campaigns.plan({ total_budget_micros: 50_000_000, pricing_model });
      expect(big.reach_forecast.impressions, pricing_model).toBeGreaterThan(small.reach_forecast.impressions);
      expect(big.reach_forecast.clicks, pricing_model).toBeGreaterThanOrEqual(small.reach_forecast.clicks);
    }
  });
});

describe('GET /v1/refunds', () => {
  test('lists the filtered clicks of one campaign with their reason', async ({ sandbox, newAccount }) => {
    const acct = await newAccount();
    const a = await acct.write.campaigns.create(campaignBody());
    const b = await acct.write.campaigns.create(campaignBody());
    const recorded = await sandbox.control.recordRefund(a.id, 'bot traffic', 250_000);
    await sandbox.control.recordRefund(b.id, 'duplicate click');
    expect(await acct.read.refunds.list({ campaign_id: a.id })).toEqual({ refunds: [recorded] });
    expect((await acct.read.refunds.list({ campaign_id: b.id })).refunds).toEqual([
      expect.objectContaining({ reason: 'duplicate click', amount_micros: 2_000_000 }),
    ]);
  });
});

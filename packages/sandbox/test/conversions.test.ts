/**
 * The s2s rules, over real HTTP with raw JSON assertions: s2s campaigns only, the 7-day window on the
 * sandbox clock, idempotency by order_id (never charged twice), 409 on a reused order_id, reversal only
 * of confirmed orders inside the return window, idempotent reversal, and the conversion report.
 */
import { describe, expect } from 'vitest';
import { campaignBody, campaignWithClick, DAY_S, test, withSandbox } from './fixtures.ts';
import { type Json, WireError } from './wire.ts';

describe('POST /v1/conversions/s2s', () => {
  test('confirms a click of an s2s campaign and returns the campaign_id', async ({ sandbox, newAccount }) => {
    const acct = await newAccount();
    const { campaignId, clickToken } = await campaignWithClick(sandbox, acct);
    await sandbox.control.advanceClock(DAY_S);
    const before = sandbox.now();
    const result = await acct.conversions.conversions.confirm({
      click_token: clickToken,
      order_id: 'ord-1',
      value_micros: 12_340_000,
    });
    expect(result).toMatchObject({
      order_id: 'ord-1',
      campaign_id: campaignId,
      value_micros: 12_340_000,
      status: 'confirmed',
      duplicate: false,
    });
    // Stamped by the sandbox clock (a day ahead of the real one), not by the real clock.
    expect(Date.parse(result.confirmed_at)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(result.confirmed_at)).toBeLessThanOrEqual(sandbox.now());
    const report = await sandbox.control.conversions(acct.accountId);
    expect(report.conversions).toEqual([
      expect.objectContaining({
        order_id: 'ord-1',
        campaign_id: campaignId,
        state: 'confirmed',
        reversed_at: null,
      }),
    ]);
  });

  test('refuses a click of a pixel campaign with 422, so an order is never billed through both paths', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { clickToken } = await campaignWithClick(sandbox, acct, { conversion_source: 'pixel' });
    const err = await acct.conversions.conversions
      .confirm({ click_token: clickToken, order_id: 'ord-1', value_micros: 1 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WireError);
    expect(err).toMatchObject({
      status: 422,
      detail: expect.stringContaining('is not on s2s: its conversion source is pixel'),
    });
    expect((await sandbox.control.conversions(acct.accountId)).conversions).toEqual([]);
  });

  test('campaigns default to the pixel conversion source', async ({ sandbox, newAccount }) => {
    const acct = await newAccount();
    const { conversion_source: _source, ...rest } = campaignBody();
    const campaign = await acct.write.campaigns.create(rest);
    expect(campaign.conversion_source).toBe('pixel');
    const click = await sandbox.control.click(campaign.id);
    await expect(
      acct.conversions.conversions.confirm({
        click_token: click.click_token,
        order_id: 'o',
        value_micros: 1,
      }),
    ).rejects.toMatchObject({ status: 422 });
  });

  test('the pixel bills pixel campaigns but not s2s campaigns', async ({ sandbox, newAccount }) => {
    const acct = await newAccount();
    const pixel = await campaignWithClick(sandbox, acct, { conversion_source: 'pixel' });
    const s2s = await campaignWithClick(sandbox, acct, { conversion_source: 's2s' });
    expect(await sandbox.control.firePixel({ click_token: pixel.clickToken, order_id: 'p1' })).toMatchObject({
      billed: true,
      charged_micros: 2_000_000,
    });
    expect(await sandbox.control.firePixel({ click_token: s2s.clickToken, order_id: 's1' })).toMatchObject({
      billed: false,
      charged_micros: 0,
    });
    const campaigns = (await acct.read.campaigns.list()).campaigns;
    expect(campaigns.find((c: Json) => c.id === pixel.campaignId)?.spend_micros).toBe(2_000_000);
    expect(campaigns.find((c: Json) => c.id === s2s.campaignId)?.spend_micros).toBe(0);
  });

  test('accepts a confirmation just inside 7 days after the click and refuses one just after, counting it late', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const early = await campaignWithClick(sandbox, acct);
    const click2 = await sandbox.control.click(early.campaignId);
    await sandbox.control.advanceClock(7 * DAY_S - 1);
    await expect(
      acct.conversions.conversions.confirm({
        click_token: early.clickToken,
        order_id: 'in-time',
        value_micros: 1,
      }),
    ).resolves.toMatchObject({ duplicate: false });
    await sandbox.control.advanceClock(2);
    const err = await acct.conversions.conversions
      .confirm({ click_token: click2.click_token, order_id: 'too-late', value_micros: 1 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 422, detail: expect.stringContaining('older than 7 days') });
    const report = await sandbox.control.conversions(acct.accountId);
    expect(report.counts).toEqual({ requests: 2, duplicates: 0, rejections: 1, late: 1 });
    expect(report.conversions.map((c: Json) => c.order_id)).toEqual(['in-time']);
  });

  test('answers the same order_id again with the same result, duplicate: true, and never charges twice', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { campaignId, clickToken } = await campaignWithClick(sandbox, acct);
    const body = { click_token: clickToken, order_id: 'ord-dup', value_micros: 5_000_000 };
    const first = await acct.conversions.conversions.confirm(body);
    await sandbox.control.advanceClock(3600);
    const second = await acct.conversions.conversions.confirm(body);
    expect(second).toEqual({ ...first, duplicate: true });
    const campaign = (await acct.read.campaigns.list()).campaigns.find((c: Json) => c.id === campaignId);
    expect(campaign?.spend_micros).toBe(2_000_000);
    const report = await sandbox.control.conversions(acct.accountId);
    expect(report.conversions).toHaveLength(1);
    expect(report.counts).toMatchObject({ requests: 2, duplicates: 1 });
  });

  test('a repeat of an accepted order after the 7 days gets the original answer but counts as late', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { clickToken } = await campaignWithClick(sandbox, acct);
    const body = { click_token: clickToken, order_id: 'slow-retry', value_micros: 4 };
    const first = await acct.conversions.conversions.confirm(body);
    await sandbox.control.advanceClock(8 * DAY_S);
    await expect(acct.conversions.conversions.confirm(body)).resolves.toEqual({ ...first, duplicate: true });
    expect((await sandbox.control.conversions(acct.accountId)).counts).toEqual({
      requests: 2,
      duplicates: 1,
      rejections: 0,
      late: 1,
    });
  });

  test('answers 409 when an order_id comes back with a different value or click', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { campaignId, clickToken } = await campaignWithClick(sandbox, acct);
    const other = await sandbox.control.click(campaignId);
    await acct.conversions.conversions.confirm({
      click_token: clickToken,
      order_id: 'ord-9',
      value_micros: 100,
    });
    for (const body of [
      { click_token: clickToken, order_id: 'ord-9', value_micros: 101 },
      { click_token: other.click_token, order_id: 'ord-9', value_micros: 100 },
    ]) {
      const err = await acct.conversions.conversions.confirm(body).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 409, detail: expect.stringContaining('ord-9') });
    }
    expect((await sandbox.control.conversions(acct.accountId)).conversions).toEqual([
      expect.objectContaining({ order_id: 'ord-9', value_micros: 100 }),
    ]);
  });

  test('answers 404 for an unknown click token', async ({ newAccount }) => {
    const acct = await newAccount();
    await expect(
      acct.conversions.conversions.confirm({
        click_token: 'no-such-token-000000000000',
        order_id: 'o',
        value_micros: 1,
      }),
    ).rejects.toMatchObject({ status: 404 });
  });

  test('answers 400 naming the field when the body is malformed', async ({ sandbox, newAccount }) => {
    const acct = await newAccount();
    const res = await fetch(`${sandbox.url}/v1/conversions/s2s`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.keys.conversions}`, 'content-type': 'application/json' },
      body: JSON.stringify({ click_token: 'x', order_id: 'o', value_micros: 1.5 }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ detail: expect.stringMatching(/^value_micros: /) });
    for (const [body, field] of [
      [{ order_id: 'o', value_micros: 1 }, 'click_token'],
      [{ click_token: 'x', order_id: '', value_micros: 1 }, 'order_id'],
      [{ click_token: 'x', order_id: 'o', value_micros: '1.00' }, 'value_micros'],
      [{ click_token: 'x', order_id: 'o', value_micros: -1 }, 'value_micros'],
      [{ click_token: 'x', order_id: 'o', value_micros: 1, extra: 1 }, 'extra'],
    ] as const) {
      await expect(acct.conversions.conversions.confirm(body)).rejects.toMatchObject({
        status: 400,
        detail: expect.stringMatching(new RegExp(`^${field}: `)),
      });
    }
  });

  test('charges a cross_promo campaign in credit and gives it back on reversal', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount({ credit_micros: 10_000_000 });
    const { campaignId, clickToken } = await campaignWithClick(sandbox, acct, {
      pricing_model: 'cross_promo',
      total_budget_micros: null,
      bid_micros: 1_000_000,
    });
    await acct.conversions.conversions.confirm({ click_token: clickToken, order_id: 'x1', value_micros: 1 });
    expect((await acct.read.credits.get()).balance_micros).toBe(9_000_000);
    await acct.conversions.conversions.refund({ campaign_id: campaignId, order_id: 'x1' });
    const credits = await acct.read.credits.get();
    expect(credits.balance_micros).toBe(10_000_000);
    expect(credits.activity.map((a: Json) => a.amount_micros)).toEqual([1_000_000, -1_000_000, 10_000_000]);
  });
});

describe('POST /v1/conversions/s2s/refund', () => {
  test('reverses a confirmed order, gives the charge back, and answers a repeat with duplicate: true', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { campaignId, clickToken } = await campaignWithClick(sandbox, acct);
    await acct.conversions.conversions.confirm({ click_token: clickToken, order_id: 'r1', value_micros: 9 });
    const first = await acct.conversions.conversions.refund({ campaign_id: campaignId, order_id: 'r1' });
    expect(first).toMatchObject({
      order_id: 'r1',
      campaign_id: campaignId,
      status: 'reversed',
      duplicate: false,
    });
    await sandbox.control.advanceClock(60);
    const again = await acct.conversions.conversions.refund({ campaign_id: campaignId, order_id: 'r1' });
    expect(again).toEqual({ ...first, duplicate: true });
    const campaign = (await acct.read.campaigns.list()).campaigns.find((c: Json) => c.id === campaignId);
    expect(campaign?.spend_micros).toBe(0);
    const report = await sandbox.control.conversions(acct.accountId);
    expect(report.conversions).toEqual([
      expect.objectContaining({ order_id: 'r1', state: 'reversed', reversed_at: first.reversed_at }),
    ]);
  });

  test('refuses to reverse an order that was never confirmed with 404', async ({ sandbox, newAccount }) => {
    const acct = await newAccount();
    const { campaignId } = await campaignWithClick(sandbox, acct);
    await expect(
      acct.conversions.conversions.refund({ campaign_id: campaignId, order_id: 'never' }),
    ).rejects.toMatchObject({
      status: 404,
    });
  });

  test('refuses a confirmation of an order that was reversed with 409', async ({ sandbox, newAccount }) => {
    const acct = await newAccount();
    const { campaignId, clickToken } = await campaignWithClick(sandbox, acct);
    const body = { click_token: clickToken, order_id: 'back', value_micros: 3 };
    await acct.conversions.conversions.confirm(body);
    await acct.conversions.conversions.refund({ campaign_id: campaignId, order_id: 'back' });
    await expect(acct.conversions.conversions.confirm(body)).rejects.toMatchObject({ status: 409 });
  });

  test('reverses inside the default 30-day return window and refuses after it with 422', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { campaignId, clickToken } = await campaignWithClick(sandbox, acct);
    const other = await sandbox.control.click(campaignId);
    await acct.conversions.conversions.confirm({ click_token: clickToken, order_id: 'a', value_micros: 1 });
    await acct.conversions.conversions.confirm({
      click_token: other.click_token,
      order_id: 'b',
      value_micros: 1,
    });
    await sandbox.control.advanceClock(30 * DAY_S - 1);
    await expect(
      acct.conversions.conversions.refund({ campaign_id: campaignId, order_id: 'a' }),
    ).resolves.toMatchObject({
      status: 'reversed',
    });
    await sandbox.control.advanceClock(2);
    const err = await acct.conversions.conversions
      .refund({ campaign_id: campaignId, order_id: 'b' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 422, detail: expect.stringContaining('return window closed') });
  });

  test('honours a configured returnWindowDays', async () => {
    await withSandbox({ returnWindowDays: 2 }, async (sandbox, newAccount) => {
      const acct = await newAccount();
      const { campaignId, clickToken } = await campaignWithClick(sandbox, acct);
      await acct.conversions.conversions.confirm({ click_token: clickToken, order_id: 'w', value_micros: 1 });
      await sandbox.control.advanceClock(2 * DAY_S + 1);
      await expect(
        acct.conversions.conversions.refund({ campaign_id: campaignId, order_id: 'w' }),
      ).rejects.toMatchObject({
        status: 422,
      });
    });
  });

  test('refuses the s2s reversal for a pixel campaign with 422', async ({ sandbox, newAccount }) => {
    const acct = await newAccount();
    const { campaignId } = await campaignWithClick(sandbox, acct, { conversion_source: 'pixel' });
    await expect(
      acct.conversions.conversions.refund({ campaign_id: campaignId, order_id: 'x' }),
    ).rejects.toMatchObject({
      status: 422,
    });
  });
});

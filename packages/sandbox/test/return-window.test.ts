/**
 * The return window (not in the API: `returnWindowDays`, 30 by default) and the answers a client acts on
 * when a reversal is refused: a 60-day window reverses on day 45 and refuses on day 61 with the documented
 * "return window closed" detail; an order the service never applied is a 404 with a detail, the same for
 * an unknown order, an order of another campaign and an order of another account.
 */
import { describe, expect } from 'vitest';
import { campaignWithClick, DAY_S, test, withSandbox } from './fixtures.ts';
import type { WireError } from './wire.ts';

describe('the return window', () => {
  test('a 60-day window reverses on day 45 and refuses on day 61 with the documented detail', async () => {
    await withSandbox({ returnWindowDays: 60 }, async (sandbox, newAccount) => {
      const acct = await newAccount();
      const { campaignId, clickToken } = await campaignWithClick(sandbox, acct);
      const confirmed = await acct.conversions.conversions.confirm({
        click_token: clickToken,
        order_id: 'late-return',
        value_micros: 1,
      });
      await acct.conversions.conversions.confirm({
        click_token: clickToken,
        order_id: 'early',
        value_micros: 1,
      });

      await sandbox.control.advanceClock(45 * DAY_S);
      expect(
        await acct.conversions.conversions.refund({ campaign_id: campaignId, order_id: 'early' }),
      ).toMatchObject({ status: 'reversed', duplicate: false });
      expect(await sandbox.control.conversion('early')).toMatchObject({ state: 'reversed' });

      await sandbox.control.advanceClock(16 * DAY_S);
      const err = (await acct.conversions.conversions
        .refund({ campaign_id: campaignId, order_id: 'late-return' })
        .catch((e: unknown) => e)) as WireError;
      expect(err.status).toBe(422);
      expect(err.detail).toBe(
        `return window closed: order late-return was confirmed at ${confirmed.confirmed_at} and may be reversed for 60 days`,
      );
      expect(await sandbox.control.conversion('late-return')).toMatchObject({
        state: 'confirmed',
        charged_micros: 2_000_000,
      });
    });
  });

  test('a reversal of an order the service never applied is a 404 with a detail, whoever owns what', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const other = await newAccount();
    const first = await campaignWithClick(sandbox, acct);
    const second = await campaignWithClick(sandbox, acct);
    const foreign = await campaignWithClick(sandbox, other);
    await acct.conversions.conversions.confirm({
      click_token: second.clickToken,
      order_id: 'o-2',
      value_micros: 1,
    });
    await other.conversions.conversions.confirm({
      click_token: foreign.clickToken,
      order_id: 'o-x',
      value_micros: 1,
    });

    for (const orderId of ['never', 'o-2', 'o-x']) {
      const err = (await acct.conversions.conversions
        .refund({ campaign_id: first.campaignId, order_id: orderId })
        .catch((e: unknown) => e)) as WireError;
      expect(err.status).toBe(404);
      expect(err.headers.get('content-type')).toMatch(/^application\/json/);
      expect(err.detail).toBe(`no confirmed order ${orderId} for campaign ${first.campaignId}`);
    }
    expect((await sandbox.control.conversion('o-2'))?.state).toBe('confirmed');
    expect((await sandbox.control.conversion('o-x'))?.state).toBe('confirmed');
  });
});

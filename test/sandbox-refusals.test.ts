/**
 * The sandbox's refusal wording, read by the kit as it reads the real service: the real client sends to a
 * sandbox and the Dispatcher's own classifier (`classifyFailure`, default `windowClosedPattern`) sorts what
 * came back. A closed return window and a click past 7 days read as `window-closed`; a campaign not on s2s
 * reads as `held` (default `campaignNotS2sPattern`), with the campaign its detail names; a reversal of an
 * order never applied is neither (the service's own JSON 404, not a misconfiguration). The sandbox imports nothing of ours, so this check of
 * its words against the kit's pattern lives here.
 */
import { createClient } from '@postback/client';
import { DEFAULT_WINDOW_CLOSED_PATTERN } from '@postback/core';
import { startSandbox } from '@postback/sandbox';
import { describe, expect, it } from 'vitest';
import { classifyFailure } from '../packages/core/src/queue/dispatcher/classify.ts';

const DAY_S = 86_400;

async function refused(promise: Promise<unknown>) {
  const err = await promise.then(
    () => {
      throw new Error('the sandbox accepted it');
    },
    (e: unknown) => e,
  );
  return { err, failure: classifyFailure(err) };
}

describe("the sandbox's refusals, as the kit reads them", () => {
  it('window closed, campaign not on s2s, nothing to reverse', async () => {
    await using sandbox = await startSandbox({ returnWindowDays: 60 });
    const { keys } = await sandbox.control.createAccount();
    const ads = createClient({ baseUrl: sandbox.url, apiKey: keys.all });
    try {
      const campaign = await ads.campaigns.create({
        name: 'wording',
        pricing_model: 'cpa',
        bid_micros: 1_000,
        total_budget_micros: 1_000_000,
        conversion_source: 's2s',
        creatives: [{ headline: 'h', body: 'b', cta: 'c', landing_url: 'https://shop.example/' }],
      });
      const click = await sandbox.control.click(campaign.id);
      const late = await sandbox.control.click(campaign.id);
      await ads.conversions.confirm({ click_token: click.click_token, order_id: 'o-1', value_micros: 1 });

      await sandbox.control.advanceClock(61 * DAY_S);
      const returned = await refused(ads.conversions.refund({ campaign_id: campaign.id, order_id: 'o-1' }));
      expect(returned.failure).toMatchObject({ class: 'window-closed', status: 422 });
      const tooOld = await refused(
        ads.conversions.confirm({ click_token: late.click_token, order_id: 'o-2', value_micros: 1 }),
      );
      expect(tooOld.failure).toMatchObject({ class: 'window-closed', status: 422 });

      const nothing = await refused(ads.conversions.refund({ campaign_id: campaign.id, order_id: 'never' }));
      expect(nothing.failure.status).toBe(404);
      expect(nothing.failure.class).not.toMatch(/^(window-closed|misconfigured)$/);
      expect(nothing.failure.reason).toContain('no confirmed order never');

      await sandbox.control.setConversionSource(campaign.id, 'pixel');
      const fresh = await sandbox.control.click(campaign.id);
      const pixel = await refused(
        ads.conversions.confirm({ click_token: fresh.click_token, order_id: 'o-3', value_micros: 1 }),
      );
      expect(pixel.failure.status).toBe(422);
      expect(pixel.failure).toMatchObject({ class: 'held', campaignId: campaign.id });
      expect(pixel.failure.reason).toContain(`campaign ${campaign.id} is not on s2s`);
      expect(DEFAULT_WINDOW_CLOSED_PATTERN.test(pixel.failure.reason)).toBe(false);
    } finally {
      await ads.close();
    }
  });
});

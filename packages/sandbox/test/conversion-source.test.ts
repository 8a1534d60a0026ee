/**
 * Switching a campaign's conversion source through the control API
 * (`POST /_sandbox/campaigns/{campaign_id}/conversion-source`): on `pixel` the s2s endpoints refuse the
 * campaign with a 422 that names it and says it is not on s2s; back on `s2s` they accept it again; what
 * was applied stays applied, and a repeat of an applied request keeps its original answer.
 */
import { describe, expect } from 'vitest';
import { campaignBody, campaignWithClick, raw, test } from './fixtures.ts';
import { WireError } from './wire.ts';

const NOT_ON_S2S = /^campaign (cmp_[a-z0-9]+) is not on s2s: its conversion source is pixel, /;

describe('POST /_sandbox/campaigns/{campaign_id}/conversion-source', () => {
  test('a pixel campaign is refused with 422 naming it, then accepted once switched to s2s', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { campaignId, clickToken } = await campaignWithClick(sandbox, acct, { conversion_source: 'pixel' });
    const order = { click_token: clickToken, order_id: 'ord-1', value_micros: 5_000_000 };

    const refused = await acct.conversions.conversions.confirm(order).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WireError);
    expect(refused).toMatchObject({ status: 422 });
    expect(NOT_ON_S2S.exec((refused as WireError).detail ?? '')?.[1]).toBe(campaignId);
    expect(await sandbox.control.conversion('ord-1')).toBeUndefined();

    const switched = await sandbox.control.setConversionSource(campaignId, 's2s');
    expect(switched).toMatchObject({ id: campaignId, conversion_source: 's2s' });
    expect((await acct.read.campaigns.list()).campaigns[0].conversion_source).toBe('s2s');

    expect(await acct.conversions.conversions.confirm(order)).toMatchObject({
      campaign_id: campaignId,
      status: 'confirmed',
      duplicate: false,
    });
    expect(await sandbox.control.conversion('ord-1')).toMatchObject({
      state: 'confirmed',
      charged_micros: 2_000_000,
    });
  });

  test('back on pixel: new confirmations and reversals get 422, repeats of applied ones their original answer', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const { campaignId, clickToken } = await campaignWithClick(sandbox, acct);
    const first = { click_token: clickToken, order_id: 'ord-1', value_micros: 1_000 };
    const applied = await acct.conversions.conversions.confirm(first);
    await acct.conversions.conversions.confirm({ ...first, order_id: 'ord-2' });
    await acct.conversions.conversions.refund({ campaign_id: campaignId, order_id: 'ord-2' });

    await sandbox.control.setConversionSource(campaignId, 'pixel');
    // The lost answer of an applied confirmation is asked again: the same result, never a refusal.
    expect(await acct.conversions.conversions.confirm(first)).toEqual({ ...applied, duplicate: true });
    expect(
      await acct.conversions.conversions.refund({ campaign_id: campaignId, order_id: 'ord-2' }),
    ).toMatchObject({ status: 'reversed', duplicate: true });
    for (const attempt of [
      acct.conversions.conversions.confirm({ ...first, order_id: 'ord-3' }),
      acct.conversions.conversions.refund({ campaign_id: campaignId, order_id: 'ord-1' }),
    ]) {
      const err = await attempt.catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 422 });
      expect(NOT_ON_S2S.exec((err as WireError).detail ?? '')?.[1]).toBe(campaignId);
    }
    expect((await sandbox.control.conversion('ord-1'))?.state).toBe('confirmed');
    expect(await sandbox.control.conversion('ord-3')).toBeUndefined();

    await sandbox.control.setConversionSource(campaignId, 's2s');
    expect(
      await acct.conversions.conversions.refund({ campaign_id: campaignId, order_id: 'ord-1' }),
    ).toMatchObject({ status: 'reversed', duplicate: false });
  });

  test('refuses an unknown source or field with 400, an unknown campaign with 404', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const campaign = await acct.write.campaigns.create(campaignBody());
    const path = `/_sandbox/campaigns/${campaign.id}/conversion-source`;
    const bad = await raw(sandbox, 'POST', path, { body: { conversion_source: 'app' } });
    expect(bad).toMatchObject({
      status: 400,
      json: { detail: 'conversion_source: must be one of pixel, s2s' },
    });
    const extra = await raw(sandbox, 'POST', path, { body: { conversion_source: 'pixel', when: 'now' } });
    expect(extra).toMatchObject({ status: 400, json: { detail: 'when: is not a known field' } });
    const missing = await raw(sandbox, 'POST', '/_sandbox/campaigns/cmp_nope/conversion-source', {
      body: { conversion_source: 'pixel' },
    });
    expect(missing).toMatchObject({ status: 404, json: { detail: 'campaign cmp_nope not found' } });
    await expect(sandbox.control.setConversionSource('cmp_nope', 's2s')).rejects.toMatchObject({
      status: 404,
    });
    expect((await acct.read.campaigns.list()).campaigns[0].conversion_source).toBe('s2s');
  });
});

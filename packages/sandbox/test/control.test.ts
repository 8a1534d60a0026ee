/**
 * The control API under /_sandbox/: accounts and keys, clicks and landing URLs, the clock, the
 * conversion report, campaign status, reset — and the in-process handle of startSandbox.
 */
import { describe, expect } from 'vitest';
import { campaignBody, campaignWithClick, DAY_S, raw, test, withSandbox } from './fixtures.ts';

describe('control API', () => {
  test('POST /_sandbox/accounts returns an account id and four distinct keys', async ({ sandbox }) => {
    const res = await raw(sandbox, 'POST', '/_sandbox/accounts', { body: {} });
    expect(res.status).toBe(201);
    const body = res.json as { account_id: string; keys: Record<string, string> };
    expect(body.account_id).toMatch(/^acct_/);
    expect(Object.keys(body.keys).sort()).toEqual(['all', 'conversions', 'read', 'write']);
    expect(new Set(Object.values(body.keys)).size).toBe(4);
    expect(await sandbox.control.account(body.account_id)).toEqual({
      account_id: body.account_id,
      balance_micros: 1_000_000_000,
      held_micros: 0,
      credit_micros: 0,
    });
    expect((await raw(sandbox, 'POST', '/_sandbox/accounts', { body: { balance_micros: -1 } })).status).toBe(
      400,
    );
  });

  test('POST /_sandbox/clicks puts the token into the first creative landing URL, keeping its query', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const campaign = await acct.write.campaigns.create(
      campaignBody({
        creatives: [
          { headline: 'a', body: 'b', cta: 'c', landing_url: 'https://shop.example/first?utm=ad#top' },
          { headline: 'a', body: 'b', cta: 'c', landing_url: 'https://shop.example/second' },
        ],
      }),
    );
    const click = await sandbox.control.click(campaign.id);
    expect(click.click_token).toMatch(/^[A-Za-z0-9_-]{24,48}$/);
    const landing = new URL(click.landing_url);
    expect(landing.pathname).toBe('/first');
    expect(landing.searchParams.get('utm')).toBe('ad');
    expect(landing.searchParams.get('click_token')).toBe(click.click_token);
    expect(Math.abs(Date.parse(click.clicked_at) - sandbox.now())).toBeLessThan(5_000);
  });

  test('clickParam names the landing URL parameter', async () => {
    await withSandbox({ clickParam: 'pbclid' }, async (sandbox, newAccount) => {
      const acct = await newAccount();
      const campaign = await acct.write.campaigns.create(campaignBody());
      const click = await sandbox.control.click(campaign.id);
      expect(new URL(click.landing_url).searchParams.get('pbclid')).toBe(click.click_token);
      expect(new URL(click.landing_url).searchParams.has('click_token')).toBe(false);
    });
  });

  test('clicks are issued for a campaign in any state, and 404 for an unknown campaign', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    const campaign = await acct.write.campaigns.create(campaignBody());
    for (const status of ['review', 'active', 'paused', 'rejected', 'completed']) {
      await sandbox.control.setCampaignStatus(campaign.id, status);
      expect((await acct.read.campaigns.list()).campaigns[0]?.status).toBe(status);
      await expect(sandbox.control.click(campaign.id)).resolves.toMatchObject({
        click_token: expect.any(String),
      });
    }
    expect(
      (await raw(sandbox, 'POST', '/_sandbox/clicks', { body: { campaign_id: 'cmp_nope' } })).status,
    ).toBe(404);
  });

  test('POST /_sandbox/clock moves the sandbox clock forward, and it stamps what follows', async ({
    sandbox,
    newAccount,
  }) => {
    const before = Date.parse((await sandbox.control.clock()).now);
    const { now } = await sandbox.control.advanceClock(3 * DAY_S);
    expect(Date.parse(now) - before).toBeGreaterThanOrEqual(3 * DAY_S * 1000);
    expect(Date.parse(now) - before).toBeLessThan(3 * DAY_S * 1000 + 5_000);
    const acct = await newAccount();
    const campaign = await acct.write.campaigns.create(campaignBody());
    expect(Date.parse(campaign.created_at)).toBeGreaterThanOrEqual(Date.parse(now));
    expect((await raw(sandbox, 'POST', '/_sandbox/clock', { body: { advance_seconds: -1 } })).status).toBe(
      400,
    );
  });

  test('the clock starts from the injected now', async () => {
    await withSandbox({ now: () => Date.UTC(2030, 0, 1) }, async (sandbox) => {
      expect((await sandbox.control.clock()).now).toBe('2030-01-01T00:00:00.000Z');
      expect((await sandbox.control.advanceClock(90)).now).toBe('2030-01-01T00:01:30.000Z');
    });
  });

  test('GET /_sandbox/conversions reports every account, or one with ?account_id=', async ({
    sandbox,
    newAccount,
  }) => {
    const a = await newAccount();
    const b = await newAccount();
    const ca = await campaignWithClick(sandbox, a);
    const cb = await campaignWithClick(sandbox, b);
    const confirmed = await a.conversions.conversions.confirm({
      click_token: ca.clickToken,
      order_id: 'A1',
      value_micros: 10,
    });
    await b.conversions.conversions.confirm({ click_token: cb.clickToken, order_id: 'B1', value_micros: 20 });
    await b.conversions.conversions.confirm({ click_token: cb.clickToken, order_id: 'B1', value_micros: 20 });
    const all = await sandbox.control.conversions();
    expect(all.conversions.map((c) => c.order_id).sort()).toEqual(['A1', 'B1']);
    expect(all.counts).toEqual({ requests: 3, duplicates: 1, rejections: 0, late: 0 });
    const onlyA = await sandbox.control.conversions(a.accountId);
    expect(onlyA).toEqual({
      conversions: [
        {
          account_id: a.accountId,
          order_id: 'A1',
          campaign_id: ca.campaignId,
          value_micros: 10,
          charged_micros: 2_000_000,
          state: 'confirmed',
          clicked_at: expect.any(String),
          confirmed_at: confirmed.confirmed_at,
          reversed_at: null,
        },
      ],
      counts: { requests: 1, duplicates: 0, rejections: 0, late: 0 },
    });
    // One order by order_id (the oracle tests ask: was this order applied, charged, reversed?).
    expect(await sandbox.control.conversion('B1')).toMatchObject({
      account_id: b.accountId,
      campaign_id: cb.campaignId,
      charged_micros: 2_000_000,
      state: 'confirmed',
    });
    expect(await sandbox.control.conversion('B1', a.accountId)).toBeUndefined();
    expect(await sandbox.control.conversion('never')).toBeUndefined();
    await b.conversions.conversions.refund({ campaign_id: cb.campaignId, order_id: 'B1' });
    expect(await sandbox.control.conversion('B1', b.accountId)).toMatchObject({
      state: 'reversed',
      reversed_at: expect.any(String),
    });
  });

  test('POST /_sandbox/reset clears accounts, keys, faults and the clock', async ({
    sandbox,
    newAccount,
  }) => {
    const acct = await newAccount();
    await sandbox.control.advanceClock(10 * DAY_S);
    await sandbox.control.setFaults({ latency_ms: 5 });
    await sandbox.control.reset();
    await expect(acct.read.me.get()).rejects.toMatchObject({ status: 401 });
    expect(await sandbox.control.conversions()).toEqual({
      conversions: [],
      counts: { requests: 0, duplicates: 0, rejections: 0, late: 0 },
    });
    expect((await raw(sandbox, 'GET', '/_sandbox/faults')).json).toMatchObject({ latency_ms: 0 });
    expect(Math.abs(Date.parse((await sandbox.control.clock()).now) - Date.now())).toBeLessThan(5_000);
  });

  test('unknown control routes answer 404 with a detail', async ({ sandbox }) => {
    expect(await raw(sandbox, 'GET', '/_sandbox/nothing')).toMatchObject({
      status: 404,
      json: { detail: expect.any(String) },
    });
  });

  test('close() stops the server and refuses new connections', async () => {
    let url = '';
    await withSandbox({}, async (sandbox) => {
      url = sandbox.url;
      await sandbox.control.clock();
    });
    await expect(fetch(`${url}/_sandbox/clock`)).rejects.toThrow();
  });
});

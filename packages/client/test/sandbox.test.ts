/**
 * Integration tour against `@postback/sandbox` over real HTTP: every one of the 17 methods, the spec's
 * error statuses as typed errors, and the GET retry policy against the sandbox's injected faults.
 */
import { type RunningSandbox, startSandbox } from '@postback/sandbox';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type AdServiceClient,
  AuthenticationError,
  ConnectionError,
  createClient,
  formatMicros,
  NotFoundError,
  PaymentRequiredError,
  PermissionError,
  ServerError,
  toMicros,
} from '../src/index.ts';

let sandbox: RunningSandbox;
const clients: AdServiceClient[] = [];

function clientFor(
  apiKey: string,
  options: { retry?: false | { retries: number; minDelay: number; maxDelay: number } } = {},
) {
  const client = createClient({
    baseUrl: sandbox.url,
    apiKey,
    timeout: 5_000,
    retry: options.retry ?? false,
  });
  clients.push(client);
  return client;
}

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await sandbox.close();
});

const creative = {
  headline: 'Fresh coffee',
  body: 'Roasted this week',
  cta: 'Order',
  landing_url: 'https://shop.example/coffee',
};

describe('a tour of every method against the sandbox', () => {
  it('walks an advertiser and a publisher through all 17 endpoints', async () => {
    const { account_id, keys } = await sandbox.control.createAccount({
      balance_micros: toMicros('500'),
      credit_micros: toMicros('20'),
    });
    const client = clientFor(keys.all);

    // me
    const me = await client.me.get();
    expect(me.account_id).toBe(account_id);
    expect(me.scopes).toEqual(expect.arrayContaining(['read', 'write', 'conversions']));

    // segments (listed at 100+ pageviews)
    await sandbox.control.recordPageviews('tech', 150);
    expect((await client.segments.list()).segments).toContainEqual(
      expect.objectContaining({ label: 'tech', pageviews_7d: 150 }),
    );

    // campaigns: plan, create, list
    const plan = await client.campaigns.plan({ total_budget_micros: toMicros('100'), pricing_model: 'cpa' });
    expect(plan.starting_bid_micros).toBeGreaterThan(0);
    const campaign = await client.campaigns.create({
      name: 'Launch',
      pricing_model: 'cpa',
      bid_micros: plan.starting_bid_micros ?? toMicros('1'),
      total_budget_micros: toMicros('100'),
      conversion_source: 's2s',
      target_segments: ['tech'],
      creatives: [creative],
    });
    expect(campaign.id).toMatch(/^cmp_/);
    expect(campaign.status).toBe('review');
    expect(formatMicros(campaign.total_budget_micros ?? 0)).toBe('100.00');
    expect((await client.campaigns.list()).campaigns.map((c) => c.id)).toEqual([campaign.id]);

    // conversions: confirm (twice: same order_id is a duplicate) and refund
    const { click_token } = await sandbox.control.click(campaign.id);
    const confirmed = await client.conversions.confirm({
      click_token,
      order_id: 'ord_1',
      value_micros: toMicros('12.34'),
    });
    expect(confirmed).toMatchObject({
      campaign_id: campaign.id,
      order_id: 'ord_1',
      value_micros: 12_340_000,
      duplicate: false,
    });
    const again = await client.conversions.confirm({
      click_token,
      order_id: 'ord_1',
      value_micros: toMicros('12.34'),
    });
    expect(again.duplicate).toBe(true);
    const reversed = await client.conversions.refund({
      campaign_id: confirmed.campaign_id ?? campaign.id,
      order_id: 'ord_1',
    });
    expect(reversed).toMatchObject({ status: 'reversed', campaign_id: campaign.id, duplicate: false });
    expect((await sandbox.control.conversions(account_id)).conversions).toHaveLength(1);

    // refunds
    await sandbox.control.recordRefund(campaign.id, 'bot traffic');
    const { refunds } = await client.refunds.list({ campaign_id: campaign.id });
    expect(refunds.map((r) => r.reason)).toEqual(['bot traffic']);

    // sites: create, verify (before and after the proof), list
    const site = await client.sites.create({ domain: 'blog.example.com', verification_method: 'dns_txt' });
    expect(site.verified).toBe(false);
    expect((await client.sites.verify(site.id)).verified).toBe(false);
    await sandbox.control.recordDomainProof(site.domain ?? '', 'dns_txt', site.verification?.token ?? '');
    expect(await client.sites.verify(site.id)).toMatchObject({
      site_id: site.id,
      verified: true,
      method: 'dns_txt',
    });
    expect((await client.sites.list()).sites.map((s) => s.id)).toEqual([site.id]);

    // placements: create, list, live
    const placement = await client.placements.create({ site_id: site.id, name: 'sidebar', format: 'card' });
    expect((await client.placements.list({ site_id: site.id })).placements.map((p) => p.id)).toEqual([
      placement.id,
    ]);
    expect((await client.placements.live(placement.id)).live).toBe(false);
    await sandbox.control.recordPlacementRequest(placement.id);
    expect((await client.placements.live(placement.id)).live).toBe(true);

    // boost
    expect((await client.boost.get()).available).toBe(true);
    expect(await client.boost.claim({ campaign_id: campaign.id })).toMatchObject({
      campaign_id: campaign.id,
      claimed: true,
    });
    expect((await client.boost.get()).claimed_campaign_id).toBe(campaign.id);

    // credits
    const credits = await client.credits.get();
    expect(credits.balance_micros).toBe(toMicros('20'));
  });
});

describe('the spec error statuses arrive as typed errors', () => {
  it('401 for an unknown key, 403 for a missing scope, 402 for a budget above the balance, 404 for another account', async () => {
    const a = await sandbox.control.createAccount({ balance_micros: toMicros('10') });
    const b = await sandbox.control.createAccount({ balance_micros: toMicros('10') });

    await expect(clientFor('pbsk_not_a_key').me.get()).rejects.toBeInstanceOf(AuthenticationError);
    const readOnly = clientFor(a.keys.read);
    await expect(readOnly.sites.create({ domain: 'shop.example.com' })).rejects.toBeInstanceOf(
      PermissionError,
    );

    const writer = clientFor(a.keys.all);
    const tooBig = writer.campaigns.create({
      name: 'Too big',
      pricing_model: 'cpc',
      bid_micros: toMicros('0.5'),
      total_budget_micros: toMicros('11'),
      creatives: [creative],
    });
    await expect(tooBig).rejects.toBeInstanceOf(PaymentRequiredError);

    const site = await writer.sites.create({ domain: 'shop.example.com' });
    await expect(clientFor(b.keys.all).sites.verify(site.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('GET retries against injected faults', () => {
  it('a GET survives two injected 503s; a POST surfaces the first one', async () => {
    const { keys } = await sandbox.control.createAccount();
    const retrying = clientFor(keys.all, { retry: { retries: 2, minDelay: 1, maxDelay: 1_000 } });
    await sandbox.control.setFaults({ fail_next: 2, error_status: 503 });
    expect((await retrying.me.get()).scopes?.length).toBeGreaterThan(0);

    await sandbox.control.setFaults({ fail_next: 1, error_status: 503 });
    await expect(retrying.campaigns.plan({ total_budget_micros: toMicros('1') })).rejects.toBeInstanceOf(
      ServerError,
    );
  });

  it('a reset after the confirmation was applied loses the answer; re-sending the order is a duplicate, charged once', async () => {
    const { account_id, keys } = await sandbox.control.createAccount({ balance_micros: toMicros('100') });
    const client = clientFor(keys.all);
    const campaign = await client.campaigns.create({
      name: 'S2S',
      pricing_model: 'cpa',
      bid_micros: toMicros('1'),
      total_budget_micros: toMicros('50'),
      conversion_source: 's2s',
      creatives: [creative],
    });
    const { click_token } = await sandbox.control.click(campaign.id);
    await sandbox.control.setFaults({ reset_after_rate: 1 });
    const lost = await client.conversions
      .confirm({ click_token, order_id: 'ord_9', value_micros: toMicros('5') })
      .catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(ConnectionError);
    expect((lost as ConnectionError).retryable).toBe(true);
    await sandbox.control.clearFaults();
    const resent = await client.conversions.confirm({
      click_token,
      order_id: 'ord_9',
      value_micros: toMicros('5'),
    });
    expect(resent).toMatchObject({ duplicate: true, campaign_id: campaign.id });
    expect((await sandbox.control.conversions(account_id)).conversions).toHaveLength(1);
  });
});

/**
 * Every one of the 17 methods, over real HTTP, on both transports: the method, path, query, body and
 * headers that reach the server, and the typed body that comes back (unknown fields kept).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AdServiceClient, createClient, toMicros } from '../src/index.ts';
import { campaign, confirmation, creative, NOW, placement, reversal, site } from './helpers/fixtures.ts';
import { type SeenRequest, sendJson, startServer, type TestServer } from './helpers/server.ts';

const API_KEY = 'pbsk_endpoints_test_key';

const answers: Record<string, unknown> = {
  'GET /v1/me': { account_id: 'acct_1', scopes: ['read', 'write'], plan: 'pro' },
  'GET /v1/campaigns': { campaigns: [{ ...campaign, color: 'blue' }] },
  'POST /v1/campaigns': campaign,
  'POST /v1/campaigns/plan': {
    starting_bid_micros: 500_000,
    reach_forecast: { impressions: 1000, clicks: 12 },
    reserve_micros: 5_000_000,
  },
  'GET /v1/refunds': {
    refunds: [
      { id: 'rfd_1', campaign_id: 'cmp_abc123', reason: 'bot', amount_micros: 500_000, created_at: NOW },
    ],
  },
  'POST /v1/conversions/s2s': confirmation,
  'POST /v1/conversions/s2s/refund': reversal,
  'GET /v1/sites': { sites: [site] },
  'POST /v1/sites': site,
  'POST /v1/sites/site_1/verify': { site_id: 'site_1', verified: true, method: 'dns_txt', checked_at: NOW },
  'GET /v1/placements': { placements: [placement] },
  'POST /v1/placements': placement,
  'GET /v1/placements/plc_1/live': { placement_id: 'plc_1', live: false, last_request_at: null },
  'GET /v1/boost': { available: true, claimed_campaign_id: null, expires_at: null },
  'POST /v1/boost': { campaign_id: 'cmp_abc123', claimed: true, expires_at: NOW },
  'GET /v1/credits': {
    balance_micros: 3_000_000,
    activity: [{ at: NOW, amount_micros: -500_000, reason: 'spend' }],
  },
  'GET /v1/segments': { segments: [{ label: 'tech', pageviews_7d: 140 }] },
};

const CREATED = new Set(['POST /v1/campaigns', 'POST /v1/sites', 'POST /v1/placements']);

const transports = [
  { name: 'the default transport', fetch: undefined },
  {
    name: 'an injected fetch',
    fetch: (input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init),
  },
];

describe.each(transports)('every endpoint over $name', ({ fetch }) => {
  let server: TestServer;
  let client: AdServiceClient;

  beforeEach(async () => {
    server = await startServer((req, res) => {
      const key = `${req.method} ${req.path.split('?')[0]}`;
      const body = answers[key];
      if (body === undefined) return sendJson(res, 404, { detail: `no route ${key}` });
      sendJson(res, CREATED.has(key) ? 201 : 200, body);
    });
    client = createClient({ baseUrl: server.url, apiKey: API_KEY, ...(fetch ? { fetch } : {}) });
  });
  afterEach(async () => {
    await client.close();
    await server.close();
  });

  const last = (): SeenRequest => {
    const req = server.requests.at(-1);
    if (req === undefined) throw new Error('no request reached the server');
    return req;
  };

  it('sends the bearer key, JSON accept header and user agent with every call', async () => {
    await client.me.get();
    expect(last().headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(last().headers.accept).toBe('application/json');
    expect(last().headers['user-agent']).toBe('postback-client/0.1.0');
  });

  it('me.get returns the key owner and keeps fields the client does not know', async () => {
    const me = await client.me.get();
    expect(me).toEqual({ account_id: 'acct_1', scopes: ['read', 'write'], plan: 'pro' });
  });

  it('campaigns.list, create and plan speak the wire', async () => {
    const list = await client.campaigns.list();
    expect(list.campaigns[0]?.id).toBe('cmp_abc123');
    expect(list.campaigns[0]?.color).toBe('blue');

    const created = await client.campaigns.create({
      name: 'Launch',
      pricing_model: 'cpa',
      bid_micros: toMicros('2'),
      total_budget_micros: toMicros('100'),
      conversion_source: 's2s',
      creatives: [
        {
          headline: 'Fresh coffee',
          body: 'Roasted this week',
          cta: 'Order',
          landing_url: 'https://shop.example/coffee',
        },
      ],
    });
    expect(created.status).toBe('review');
    expect(last()).toMatchObject({ method: 'POST', path: '/v1/campaigns' });
    expect(last().headers['content-type']).toBe('application/json');
    expect(last().json).toEqual({
      name: 'Launch',
      pricing_model: 'cpa',
      bid_micros: 2_000_000,
      total_budget_micros: 100_000_000,
      conversion_source: 's2s',
      creatives: [creative],
    });

    const plan = await client.campaigns.plan({ total_budget_micros: 50_000_000, pricing_model: 'cpc' });
    expect(plan.reach_forecast?.clicks).toBe(12);
    expect(last().json).toEqual({ total_budget_micros: 50_000_000, pricing_model: 'cpc' });
  });

  it('refunds.list sends campaign_id as a query parameter', async () => {
    const { refunds } = await client.refunds.list({ campaign_id: 'cmp_abc123' });
    expect(refunds[0]?.reason).toBe('bot');
    expect(last()).toMatchObject({ method: 'GET', path: '/v1/refunds?campaign_id=cmp_abc123' });
  });

  it('conversions.confirm posts the order and returns the campaign_id a reversal needs', async () => {
    const result = await client.conversions.confirm({
      click_token: 'tok_abcdefghijklmnopqrstuvwx',
      order_id: 'ord_1',
      value_micros: 12_340_000,
    });
    expect(result).toEqual(confirmation);
    expect(last()).toMatchObject({ method: 'POST', path: '/v1/conversions/s2s' });
    expect(last().json).toEqual({
      click_token: 'tok_abcdefghijklmnopqrstuvwx',
      order_id: 'ord_1',
      value_micros: 12_340_000,
    });
  });

  it('conversions.refund posts campaign_id and order_id', async () => {
    const result = await client.conversions.refund({ campaign_id: 'cmp_abc123', order_id: 'ord_1' });
    expect(result.status).toBe('reversed');
    expect(last()).toMatchObject({
      method: 'POST',
      path: '/v1/conversions/s2s/refund',
      json: { campaign_id: 'cmp_abc123', order_id: 'ord_1' },
    });
  });

  it('sites.list, create and verify speak the wire', async () => {
    expect((await client.sites.list()).sites).toHaveLength(1);
    const created = await client.sites.create({ domain: 'blog.example.com', verification_method: 'dns_txt' });
    expect(created.verification?.token).toBe('postback-verify-1');
    expect(last().json).toEqual({ domain: 'blog.example.com', verification_method: 'dns_txt' });
    const verified = await client.sites.verify('site_1');
    expect(verified.verified).toBe(true);
    expect(last()).toMatchObject({ method: 'POST', path: '/v1/sites/site_1/verify', body: '' });
  });

  it('placements.list, create and live speak the wire', async () => {
    expect((await client.placements.list({ site_id: 'site_1' })).placements[0]?.name).toBe('sidebar');
    expect(last().path).toBe('/v1/placements?site_id=site_1');
    await client.placements.create({ site_id: 'site_1', name: 'sidebar', format: 'card' });
    expect(last().json).toEqual({ site_id: 'site_1', name: 'sidebar', format: 'card' });
    const live = await client.placements.live('plc_1');
    expect(live).toEqual({ placement_id: 'plc_1', live: false, last_request_at: null });
  });

  it('path parameters are percent-encoded so an id cannot change the path', async () => {
    await expect(client.placements.live('../me')).rejects.toMatchObject({ status: 404 });
    expect(last().path).toBe('/v1/placements/..%2Fme/live');
  });

  it('boost.get and boost.claim speak the wire', async () => {
    expect(await client.boost.get()).toEqual({
      available: true,
      claimed_campaign_id: null,
      expires_at: null,
    });
    const claim = await client.boost.claim({ campaign_id: 'cmp_abc123' });
    expect(claim.claimed).toBe(true);
    expect(last().json).toEqual({ campaign_id: 'cmp_abc123' });
  });

  it('credits.get keeps negative activity amounts (spend) and segments.list returns labels', async () => {
    const credits = await client.credits.get();
    expect(credits.activity?.[0]?.amount_micros).toBe(-500_000);
    expect((await client.segments.list()).segments).toEqual([{ label: 'tech', pageviews_7d: 140 }]);
  });

  it('a base URL with a path prefix keeps the prefix before /v1', async () => {
    const prefixed = createClient({
      baseUrl: `${server.url}/ads/`,
      apiKey: API_KEY,
      ...(fetch ? { fetch } : {}),
    });
    try {
      await expect(prefixed.me.get()).rejects.toMatchObject({ status: 404 });
      expect(last().path).toBe('/ads/v1/me');
    } finally {
      await prefixed.close();
    }
  });

  it('reuses kept-alive connections instead of opening one per call', async () => {
    for (let i = 0; i < 10; i++) await client.me.get();
    expect(server.requests).toHaveLength(10);
    // undici's pool may open a second socket while the first is being released; never one per call.
    expect(server.connections()).toBeLessThanOrEqual(2);
  });
});

/**
 * Bad requests are rejected before anything goes on the wire: a counting server proves zero requests,
 * and the typed error names the field path.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AdServiceClient, createClient, RequestValidationError } from '../src/index.ts';
import { creative } from './helpers/fixtures.ts';
import { sendJson, startServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let client: AdServiceClient;

beforeEach(async () => {
  server = await startServer((_req, res) => sendJson(res, 200, {}));
  client = createClient({ baseUrl: server.url, apiKey: 'pbsk_validation' });
});
afterEach(async () => {
  await client.close();
  await server.close();
});

async function rejection(promise: Promise<unknown>): Promise<RequestValidationError> {
  const err = await promise.then(
    () => {
      throw new Error('expected a RequestValidationError');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RequestValidationError);
  return err as RequestValidationError;
}

const goodCampaign = {
  name: 'Launch',
  pricing_model: 'cpc' as const,
  bid_micros: 500_000,
  total_budget_micros: 10_000_000,
  creatives: [creative],
};

describe('requests are validated before anything is sent', () => {
  it('names creatives.0.landing_url when a landing URL is not http or https, and sends nothing', async () => {
    const err = await rejection(
      client.campaigns.create({
        ...goodCampaign,
        creatives: [{ ...creative, landing_url: 'javascript:alert(1)' }],
      }),
    );
    expect(err.field).toBe('creatives.0.landing_url');
    expect(err.message).toContain('creatives.0.landing_url');
    expect(err.code).toBe('validation');
    expect(err.retryable).toBe(false);
    expect(server.requests).toHaveLength(0);
  });

  it('rejects float micros, negative micros, unsafe integers and numeric strings', async () => {
    for (const value_micros of [12.34, -1, 2 ** 53, '12340000', Number.NaN, Number.POSITIVE_INFINITY]) {
      const err = await rejection(
        client.conversions.confirm({
          click_token: 'tok',
          order_id: 'ord_1',
          value_micros: value_micros as number,
        }),
      );
      expect(err.field).toBe('value_micros');
    }
    expect(server.requests).toHaveLength(0);
  });

  it('rejects a campaign id that is not of the form cmp_<id> in bodies and queries', async () => {
    expect((await rejection(client.conversions.refund({ campaign_id: 'camp_1', order_id: 'o' }))).field).toBe(
      'campaign_id',
    );
    expect((await rejection(client.refunds.list({ campaign_id: 'cmp_' }))).field).toBe('campaign_id');
    expect((await rejection(client.boost.claim({ campaign_id: '42' }))).field).toBe('campaign_id');
    expect(server.requests).toHaveLength(0);
  });

  it('rejects values outside the pricing model and creative format enums', async () => {
    const bad = { ...goodCampaign, pricing_model: 'cpv' } as unknown as typeof goodCampaign;
    const err = await rejection(client.campaigns.create(bad));
    expect(err.field).toBe('pricing_model');
    expect(err.message).toContain('cpc, cpm, cpa, affiliate, guaranteed, cross_promo');
    const badFormat = {
      ...goodCampaign,
      creatives: [{ ...creative, format: 'banner' }],
    } as unknown as typeof goodCampaign;
    expect((await rejection(client.campaigns.create(badFormat))).field).toBe('creatives.0.format');
    expect(
      (await rejection(client.placements.create({ site_id: 's', name: 'n', format: 'video' as 'card' })))
        .field,
    ).toBe('format');
    expect(server.requests).toHaveLength(0);
  });

  it('reports an unknown (misspelt) key at its own path instead of sending it', async () => {
    const typo = {
      click_token: 'tok',
      order_id: 'o',
      value_micros: 1,
      value_micro: 1,
    } as unknown as Parameters<AdServiceClient['conversions']['confirm']>[0];
    const err = await rejection(client.conversions.confirm(typo));
    expect(err.field).toBe('value_micro');
    expect(server.requests).toHaveLength(0);
  });

  it('reports every problem in issues, the first one in field', async () => {
    const err = await rejection(
      client.conversions.confirm({ click_token: '', order_id: '', value_micros: 1.5 }),
    );
    expect(err.issues.map((i) => i.field)).toEqual(['click_token', 'order_id', 'value_micros']);
    expect(err.field).toBe('click_token');
  });

  it('rejects empty path ids and names the parameter', async () => {
    expect((await rejection(client.sites.verify(''))).field).toBe('site_id');
    expect((await rejection(client.placements.live(''))).field).toBe('placement_id');
    expect((await rejection(client.placements.list({ site_id: '' }))).field).toBe('site_id');
    expect(server.requests).toHaveLength(0);
  });

  it('rejects a campaign without creatives and a domain with a scheme', async () => {
    expect((await rejection(client.campaigns.create({ ...goodCampaign, creatives: [] }))).field).toBe(
      'creatives',
    );
    expect((await rejection(client.sites.create({ domain: 'https://blog.example.com' }))).field).toBe(
      'domain',
    );
    expect(
      (
        await rejection(
          client.sites.create({ domain: 'blog.example.com', verification_method: 'email' as 'file' }),
        )
      ).field,
    ).toBe('verification_method');
    expect(server.requests).toHaveLength(0);
  });

  it('rejects a per-call timeout that is not a positive integer', async () => {
    const err = await rejection(client.me.get({ timeout: -5 }));
    expect(err.field).toBe('timeout');
    expect(server.requests).toHaveLength(0);
  });
});

/**
 * Responses are read tolerantly (the spec shows few response shapes): unknown fields are kept, unknown
 * enum values are kept as strings, and only the fields a caller acts on are required. What is not an
 * object at all is still an `InvalidResponseError` that carries the 2xx status (the request was applied).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type * as z from 'zod';
import {
  boostClaimResultSchema,
  boostStatusSchema,
  campaignListSchema,
  campaignPlanResultSchema,
  campaignSchema,
  conversionConfirmationSchema,
  conversionReversalSchema,
  creditsSchema,
  InvalidResponseError,
  meSchema,
  placementListSchema,
  placementLivenessSchema,
  refundListSchema,
  segmentListSchema,
  siteListSchema,
  siteSchema,
  siteVerificationSchema,
} from '../src/index.ts';
import { campaign, confirmation, creative, placement, reversal, site } from './helpers/fixtures.ts';
import { sendJson } from './helpers/server.ts';
import { failureOf, serverClients } from './helpers/server-client.ts';

const CONFIRM = { click_token: 'tok_abcdefghijklmnopqrstuvwx', order_id: 'ord_1', value_micros: 1_000_000 };

/** A JSON value of bounded size, for the extra fields the service may add. */
const jsonValue = fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<unknown>;
/** Extra fields: names none of the schemas know (prefixed), arbitrary JSON values. */
const extraFields = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 12 }).map((key) => `x_${key}`),
  jsonValue,
  { maxKeys: 5 },
);
/** An enum value the client does not know (any non-empty string). */
const unknownValue = fc.string({ minLength: 1, maxLength: 20 });

/** Every response schema with a valid body of it (the sandbox's shapes). */
const bodies: Array<[string, z.ZodType, Record<string, unknown>]> = [
  ['me', meSchema, { account_id: 'acct_1', scopes: ['read'] }],
  ['campaign', campaignSchema, campaign],
  ['campaign list', campaignListSchema, { campaigns: [campaign] }],
  [
    'plan',
    campaignPlanResultSchema,
    { starting_bid_micros: 1, reach_forecast: { impressions: 1, clicks: 0 }, reserve_micros: 1 },
  ],
  [
    'refunds',
    refundListSchema,
    {
      refunds: [{ id: 'r1', campaign_id: 'cmp_1', reason: 'bot', amount_micros: 1, created_at: 'now' }],
    },
  ],
  ['confirmation', conversionConfirmationSchema, confirmation],
  ['reversal', conversionReversalSchema, reversal],
  ['site', siteSchema, site],
  ['site list', siteListSchema, { sites: [site] }],
  [
    'verification',
    siteVerificationSchema,
    { site_id: 'site_1', verified: true, method: 'dns_txt', checked_at: 'now' },
  ],
  ['placement list', placementListSchema, { placements: [placement] }],
  ['liveness', placementLivenessSchema, { placement_id: 'plc_1', live: true, last_request_at: null }],
  ['boost', boostStatusSchema, { available: true, claimed_campaign_id: null, expires_at: null }],
  ['boost claim', boostClaimResultSchema, { campaign_id: 'cmp_1', claimed: true, expires_at: 'now' }],
  [
    'credits',
    creditsSchema,
    { balance_micros: 5, activity: [{ at: 'now', amount_micros: -1, reason: 'x' }] },
  ],
  ['segments', segmentListSchema, { segments: [{ label: 'tech', pageviews_7d: 140 }] }],
];

describe('response schemas read tolerantly', () => {
  it.each(bodies)('a %s answer with arbitrary extra fields parses and keeps them', (_name, schema, body) => {
    fc.assert(
      fc.property(extraFields, (extra) => {
        const parsed = schema.parse({ ...body, ...extra }) as Record<string, unknown>;
        for (const [key, value] of Object.entries(extra)) expect(parsed[key]).toEqual(value);
      }),
      { numRuns: 100 },
    );
  });

  it('unknown values of every enum (format, pricing model, status, conversion source, verification method) are kept as strings', () => {
    fc.assert(
      fc.property(
        fc.record({
          format: unknownValue,
          pricing: unknownValue,
          status: unknownValue,
          source: unknownValue,
          method: unknownValue,
        }),
        extraFields,
        ({ format, pricing, status, source, method }, extra) => {
          const parsed = campaignListSchema.parse({
            campaigns: [
              {
                ...campaign,
                pricing_model: pricing,
                status,
                conversion_source: source,
                creatives: [{ ...creative, format, ...extra }],
              },
            ],
          });
          const first = parsed.campaigns[0];
          expect(first).toMatchObject({ pricing_model: pricing, status, conversion_source: source });
          expect(first?.creatives?.[0]).toEqual({ ...creative, format, ...extra });
          expect(
            siteSchema.parse({ ...site, verification: { method, token: 't' } }).verification?.method,
          ).toBe(method);
          expect(
            placementListSchema.parse({ placements: [{ ...placement, format }] }).placements[0]?.format,
          ).toBe(format);
          expect(conversionConfirmationSchema.parse({ ...confirmation, status }).status).toBe(status);
          expect(conversionReversalSchema.parse({ ...reversal, status }).status).toBe(status);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('the s2s answers require nothing; a campaign_id, when sent, is any string', () => {
    fc.assert(
      fc.property(fc.option(fc.string(), { nil: undefined }), extraFields, (campaignId, extra) => {
        const body = campaignId === undefined ? { ...extra } : { ...extra, campaign_id: campaignId };
        expect(conversionConfirmationSchema.parse(body)).toEqual(body);
        expect(conversionReversalSchema.parse(body)).toEqual(body);
      }),
    );
  });

  it('the fields a caller acts on stay required', () => {
    const { id: _campaignId, ...campaignWithoutId } = campaign;
    expect(campaignSchema.safeParse(campaignWithoutId).success).toBe(false);
    expect(campaignListSchema.safeParse({}).success).toBe(false);
    const { id: _siteId, ...siteWithoutId } = site;
    expect(siteSchema.safeParse(siteWithoutId).success).toBe(false);
    expect(siteVerificationSchema.safeParse({ site_id: 'site_1' }).success).toBe(false);
    expect(placementLivenessSchema.safeParse({ placement_id: 'plc_1' }).success).toBe(false);
    expect(segmentListSchema.safeParse({ segments: [{ pageviews_7d: 1 }] }).success).toBe(false);
  });
});

describe('tolerant reading over real HTTP', () => {
  const setup = serverClients({ apiKey: 'pbsk_tolerant' });
  const failure = failureOf;

  it('campaigns.list() returns a campaign whose creative format is banner, keeping unknown fields', async () => {
    const banner = { ...creative, format: 'banner', size: '300x250' };
    const { client } = await setup((_req, res) =>
      sendJson(res, 200, {
        campaigns: [
          {
            ...campaign,
            status: 'paused_by_policy',
            conversion_source: 'pixel_and_s2s',
            creatives: [banner],
          },
        ],
        next_cursor: 'c2',
      }),
    );
    const list = await client.campaigns.list();
    expect(list.campaigns[0]?.creatives?.[0]).toEqual(banner);
    expect(list.campaigns[0]).toMatchObject({
      status: 'paused_by_policy',
      conversion_source: 'pixel_and_s2s',
    });
    expect(list.next_cursor).toBe('c2');
  });

  it('a confirmation answered with an empty object, or without campaign_id, resolves', async () => {
    const { client } = await setup((_req, res, i) =>
      sendJson(res, 200, i === 0 ? {} : { order_id: 'ord_1', status: 'accepted', accepted: true }),
    );
    expect(await client.conversions.confirm(CONFIRM)).toEqual({});
    expect(await client.conversions.confirm(CONFIRM)).toEqual({
      order_id: 'ord_1',
      status: 'accepted',
      accepted: true,
    });
  });

  it.each([
    ['null', 'null'],
    ['an array', '[{"campaign_id":"cmp_1"}]'],
    ['a string', '"ok"'],
    ['a number', '1'],
  ])(
    'a 2xx whose JSON body is %s is a non-retryable InvalidResponseError carrying the 2xx status',
    async (_what, body) => {
      const { client } = await setup((_req, res) => {
        res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
      const err = await failure(client.conversions.confirm(CONFIRM));
      expect(err).toBeInstanceOf(InvalidResponseError);
      expect(err).toMatchObject({ status: 201, retryable: false, code: 'invalid_response' });
    },
  );

  it.each([
    ['empty', ''],
    ['HTML', '<html>ok</html>'],
  ])(
    'a 2xx whose body is %s (not JSON) is a retryable InvalidResponseError carrying the 2xx status',
    async (_what, body) => {
      const { client } = await setup((_req, res) => {
        res.writeHead(202, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
      const err = await failure(client.conversions.confirm(CONFIRM));
      expect(err).toBeInstanceOf(InvalidResponseError);
      expect(err).toMatchObject({ status: 202, retryable: true });
    },
  );
});

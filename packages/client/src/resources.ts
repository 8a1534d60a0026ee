/**
 * The 17 endpoints of the ad service's public REST API, grouped by resource. Each method validates its
 * input with the request schema (so nothing invalid goes on the wire) and hands the call to the requester.
 */
import type { CallOptions } from './options.ts';
import type { Requester } from './request.ts';
import {
  type BoostClaim,
  boostClaimSchema,
  type CampaignCreate,
  type CampaignPlanRequest,
  type ConversionConfirm,
  type ConversionRefund,
  campaignCreateSchema,
  campaignPlanSchema,
  conversionConfirmSchema,
  conversionRefundSchema,
  type PlacementCreate,
  type PlacementListQuery,
  placementCreateSchema,
  placementIdSchema,
  placementListQuerySchema,
  type RefundListQuery,
  refundListQuerySchema,
  type SiteCreate,
  siteCreateSchema,
  siteIdSchema,
} from './schemas/requests.ts';
import {
  type BoostClaimResult,
  type BoostStatus,
  boostClaimResultSchema,
  boostStatusSchema,
  type Campaign,
  type CampaignList,
  type CampaignPlan,
  type ConversionConfirmation,
  type ConversionReversal,
  type Credits,
  campaignListSchema,
  campaignPlanResultSchema,
  campaignSchema,
  conversionConfirmationSchema,
  conversionReversalSchema,
  creditsSchema,
  type Me,
  meSchema,
  type Placement,
  type PlacementList,
  type PlacementLiveness,
  placementListSchema,
  placementLivenessSchema,
  placementSchema,
  type RefundList,
  refundListSchema,
  type SegmentList,
  type Site,
  type SiteList,
  type SiteVerification,
  segmentListSchema,
  siteListSchema,
  siteSchema,
  siteVerificationSchema,
} from './schemas/responses.ts';
import { parseRequest } from './validate.ts';

/**
 * The endpoints, by resource. Every method takes an optional last `{ signal, timeout, apiKey }` (see
 * `CallOptions`; `apiKey` sends that call with another account's key instead of the client's).
 *
 * @example
 * ```ts
 * const { campaigns } = await client.campaigns.list({ signal });
 * ```
 */
export interface AdServiceResources {
  me: {
    /** `GET /v1/me` — who the key belongs to, and its scopes. */
    get(call?: CallOptions): Promise<Me>;
  };
  campaigns: {
    /** `GET /v1/campaigns` — own campaigns with status, bid, budget and spend. */
    list(call?: CallOptions): Promise<CampaignList>;
    /** `POST /v1/campaigns` — create a campaign (starts in review; 402 when the balance is too low). */
    create(body: CampaignCreate, call?: CallOptions): Promise<Campaign>;
    /** `POST /v1/campaigns/plan` — starting bid, reach forecast and reserve for a budget. */
    plan(body: CampaignPlanRequest, call?: CallOptions): Promise<CampaignPlan>;
  };
  refunds: {
    /** `GET /v1/refunds?campaign_id=` — clicks filtered and not billed. */
    list(query: RefundListQuery, call?: CallOptions): Promise<RefundList>;
  };
  conversions: {
    /** `POST /v1/conversions/s2s` — confirm an order; re-sending the same `order_id` is safe. */
    confirm(body: ConversionConfirm, call?: CallOptions): Promise<ConversionConfirmation>;
    /** `POST /v1/conversions/s2s/refund` — reverse a confirmed order inside its return window. */
    refund(body: ConversionRefund, call?: CallOptions): Promise<ConversionReversal>;
  };
  sites: {
    /** `GET /v1/sites` — own sites. */
    list(call?: CallOptions): Promise<SiteList>;
    /** `POST /v1/sites` — register a domain. */
    create(body: SiteCreate, call?: CallOptions): Promise<Site>;
    /** `POST /v1/sites/{site_id}/verify` — check domain ownership. */
    verify(siteId: string, call?: CallOptions): Promise<SiteVerification>;
  };
  placements: {
    /** `GET /v1/placements?site_id=` — placements of a site. */
    list(query: PlacementListQuery, call?: CallOptions): Promise<PlacementList>;
    /** `POST /v1/placements` — create a placement. */
    create(body: PlacementCreate, call?: CallOptions): Promise<Placement>;
    /** `GET /v1/placements/{placement_id}/live` — whether the slot had requests in the last 24 hours. */
    live(placementId: string, call?: CallOptions): Promise<PlacementLiveness>;
  };
  boost: {
    /** `GET /v1/boost` — Launch Day Boost status. */
    get(call?: CallOptions): Promise<BoostStatus>;
    /** `POST /v1/boost` — claim the boost for a campaign. */
    claim(body: BoostClaim, call?: CallOptions): Promise<BoostClaimResult>;
  };
  credits: {
    /** `GET /v1/credits` — cross-promotion credit balance and recent activity. */
    get(call?: CallOptions): Promise<Credits>;
  };
  segments: {
    /** `GET /v1/segments` — audience labels with 7-day pageviews (100 or more). */
    list(call?: CallOptions): Promise<SegmentList>;
  };
}

/** Builds the resource methods over a requester. */
export function createResources(send: Requester): AdServiceResources {
  const get = <S extends Parameters<Requester>[0]['response']>(
    path: string,
    response: S,
    call?: CallOptions,
    query?: Record<string, string>,
  ) => send({ method: 'GET', path, response, ...(query ? { query } : {}) }, call);
  const post = <S extends Parameters<Requester>[0]['response']>(
    path: string,
    response: S,
    body: unknown,
    call?: CallOptions,
  ) => send({ method: 'POST', path, response, body }, call);
  const segment = (value: string) => encodeURIComponent(value);

  return {
    me: { get: (call) => get('/v1/me', meSchema, call) },
    campaigns: {
      list: (call) => get('/v1/campaigns', campaignListSchema, call),
      create: async (body, call) =>
        post('/v1/campaigns', campaignSchema, parseRequest(campaignCreateSchema, body), call),
      plan: async (body, call) =>
        post('/v1/campaigns/plan', campaignPlanResultSchema, parseRequest(campaignPlanSchema, body), call),
    },
    refunds: {
      list: async (query, call) =>
        get('/v1/refunds', refundListSchema, call, parseRequest(refundListQuerySchema, query)),
    },
    conversions: {
      confirm: async (body, call) =>
        post(
          '/v1/conversions/s2s',
          conversionConfirmationSchema,
          parseRequest(conversionConfirmSchema, body),
          call,
        ),
      refund: async (body, call) =>
        post(
          '/v1/conversions/s2s/refund',
          conversionReversalSchema,
          parseRequest(conversionRefundSchema, body),
          call,
        ),
    },
    sites: {
      list: (call) => get('/v1/sites', siteListSchema, call),
      create: async (body, call) => post('/v1/sites', siteSchema, parseRequest(siteCreateSchema, body), call),
      verify: async (siteId, call) =>
        post(
          `/v1/sites/${segment(parseRequest(siteIdSchema, siteId, 'site_id'))}/verify`,
          siteVerificationSchema,
          undefined,
          call,
        ),
    },
    placements: {
      list: async (query, call) =>
        get('/v1/placements', placementListSchema, call, parseRequest(placementListQuerySchema, query)),
      create: async (body, call) =>
        post('/v1/placements', placementSchema, parseRequest(placementCreateSchema, body), call),
      live: async (placementId, call) =>
        get(
          `/v1/placements/${segment(parseRequest(placementIdSchema, placementId, 'placement_id'))}/live`,
          placementLivenessSchema,
          call,
        ),
    },
    boost: {
      get: (call) => get('/v1/boost', boostStatusSchema, call),
      claim: async (body, call) =>
        post('/v1/boost', boostClaimResultSchema, parseRequest(boostClaimSchema, body), call),
    },
    credits: { get: (call) => get('/v1/credits', creditsSchema, call) },
    segments: { list: (call) => get('/v1/segments', segmentListSchema, call) },
  };
}

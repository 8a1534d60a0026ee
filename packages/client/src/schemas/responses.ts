/**
 * Zod schemas of every response body, read tolerantly: the spec shows few response shapes ("not shown"),
 * and the real service will differ from our guesses. Three rules, one per kind of surprise:
 *
 * - **Unknown fields are kept** (`looseObject`): a field the service adds reaches the caller.
 * - **Unknown enum values are kept as strings** (`openEnum`, typed `'card' | (string & {})`): a creative
 *   `format` of `banner` is a value, not an error.
 * - **Only the fields a caller acts on are required**: the ids it passes back (`campaign.id`, `site.id`,
 *   `placement.id`), the list arrays, the one answer of a check (`verified`, `live`), a segment's
 *   `label`. Every other known field is optional; when present it must have its known type (a string
 *   where micros belong is a misunderstanding we report, not a value we guess at). The s2s answers
 *   require nothing: a 2xx means applied, and `campaign_id` (needed by a later reversal) is any string.
 *
 * Timestamps are strings as sent (the spec does not show their format). Request schemas stay strict.
 */
import * as z from 'zod';
import {
  microsSchema,
  openCampaignStatusSchema,
  openConversionSourceSchema,
  openCreativeFormatSchema,
  openEnum,
  openPricingModelSchema,
  openVerificationMethodSchema,
  signedMicrosSchema,
} from './common.ts';

const id = z.string().min(1);
const count = z.int().min(0);
/** A timestamp as the service sends it (the spec does not show the format). */
const at = z.string();

/**
 * `GET /v1/me`: who the key belongs to. Nothing is required (the spec shows no field).
 *
 * @example
 * ```ts
 * meSchema.parse({ account_id: 'acct_1', scopes: ['read'] });
 * ```
 */
export const meSchema = z.looseObject({ account_id: id.optional(), scopes: z.array(z.string()).optional() });

/** A creative as the service returns it; `format` may be a value the client does not know. @example `creativeRecordSchema.parse(campaign.creatives[0])` */
export const creativeRecordSchema = z.looseObject({
  headline: z.string().optional(),
  body: z.string().optional(),
  cta: z.string().optional(),
  landing_url: z.string().optional(),
  format: openCreativeFormatSchema.optional(),
});

/**
 * A campaign. Only `id` is required; budget fields are null for cross_promo campaigns; `status`,
 * `pricing_model` and `conversion_source` keep values the client does not know.
 *
 * @example
 * ```ts
 * const campaign = campaignSchema.parse(json);
 * ```
 */
export const campaignSchema = z.looseObject({
  id,
  name: z.string().optional(),
  pricing_model: openPricingModelSchema.optional(),
  status: openCampaignStatusSchema.optional(),
  bid_micros: microsSchema.optional(),
  total_budget_micros: microsSchema.nullable().optional(),
  daily_cap_micros: microsSchema.nullable().optional(),
  spend_micros: microsSchema.optional(),
  conversion_source: openConversionSourceSchema.optional(),
  target_categories: z.array(z.string()).optional(),
  target_segments: z.array(z.string()).optional(),
  exclude_segments: z.array(z.string()).optional(),
  creatives: z.array(creativeRecordSchema).optional(),
  created_at: at.optional(),
});

/** `GET /v1/campaigns`. @example `campaignListSchema.parse({ campaigns: [] })` */
export const campaignListSchema = z.looseObject({ campaigns: z.array(campaignSchema) });

/**
 * `POST /v1/campaigns/plan`: starting bid, reach forecast and reserve (names not shown: all optional).
 *
 * @example
 * ```ts
 * campaignPlanResultSchema.parse({ starting_bid_micros: 1, reach_forecast: { impressions: 1, clicks: 0 }, reserve_micros: 1 });
 * ```
 */
export const campaignPlanResultSchema = z.looseObject({
  starting_bid_micros: microsSchema.optional(),
  reach_forecast: z.looseObject({ impressions: count.optional(), clicks: count.optional() }).optional(),
  reserve_micros: microsSchema.optional(),
});

/** A click that was filtered and not billed. @example `refundRecordSchema.parse(json.refunds[0])` */
export const refundRecordSchema = z.looseObject({
  id: id.optional(),
  campaign_id: z.string().optional(),
  reason: z.string().optional(),
  amount_micros: microsSchema.optional(),
  created_at: at.optional(),
});

/** `GET /v1/refunds`. @example `refundListSchema.parse({ refunds: [] })` */
export const refundListSchema = z.looseObject({ refunds: z.array(refundRecordSchema) });

/**
 * `POST /v1/conversions/s2s`: the confirmation. Nothing is required: any 2xx object means the service
 * applied it. `campaign_id` (a string, when sent) is what a later reversal needs; `duplicate` is true
 * when the `order_id` was already confirmed (a retry): the order is charged once either way.
 *
 * @example
 * ```ts
 * const { campaign_id, duplicate } = conversionConfirmationSchema.parse(json);
 * ```
 */
export const conversionConfirmationSchema = z.looseObject({
  order_id: z.string().optional(),
  campaign_id: z.string().optional(),
  value_micros: microsSchema.optional(),
  status: openEnum(['confirmed'] as const).optional(),
  confirmed_at: at.optional(),
  duplicate: z.boolean().optional(),
});

/**
 * `POST /v1/conversions/s2s/refund`: the reversal. Nothing is required: any 2xx object means reversed.
 * `duplicate` is true when it was already reversed.
 *
 * @example
 * ```ts
 * const { reversed_at } = conversionReversalSchema.parse(json);
 * ```
 */
export const conversionReversalSchema = z.looseObject({
  order_id: z.string().optional(),
  campaign_id: z.string().optional(),
  status: openEnum(['reversed'] as const).optional(),
  reversed_at: at.optional(),
  duplicate: z.boolean().optional(),
});

/** A registered site with its verification instructions; only `id` is required. @example `siteSchema.parse(json)` */
export const siteSchema = z.looseObject({
  id,
  domain: z.string().optional(),
  verified: z.boolean().optional(),
  verification: z
    .looseObject({ method: openVerificationMethodSchema.optional(), token: z.string().optional() })
    .optional(),
  created_at: at.optional(),
});

/** `GET /v1/sites`. @example `siteListSchema.parse({ sites: [] })` */
export const siteListSchema = z.looseObject({ sites: z.array(siteSchema) });

/** `POST /v1/sites/{site_id}/verify`; `verified` is the answer and required. @example `siteVerificationSchema.parse(json).verified` */
export const siteVerificationSchema = z.looseObject({
  site_id: id.optional(),
  verified: z.boolean(),
  method: openVerificationMethodSchema.optional(),
  checked_at: at.optional(),
});

/** A placement (ad slot) on a site; only `id` is required. @example `placementSchema.parse(json)` */
export const placementSchema = z.looseObject({
  id,
  site_id: id.optional(),
  name: z.string().optional(),
  format: openCreativeFormatSchema.optional(),
  created_at: at.optional(),
});

/** `GET /v1/placements`. @example `placementListSchema.parse({ placements: [] })` */
export const placementListSchema = z.looseObject({ placements: z.array(placementSchema) });

/** `GET /v1/placements/{placement_id}/live`: requests in the last 24 hours; `live` is required. @example `placementLivenessSchema.parse(json).live` */
export const placementLivenessSchema = z.looseObject({
  placement_id: id.optional(),
  live: z.boolean(),
  last_request_at: at.nullable().optional(),
});

/** `GET /v1/boost`. @example `boostStatusSchema.parse(json).available` */
export const boostStatusSchema = z.looseObject({
  available: z.boolean().optional(),
  claimed_campaign_id: z.string().nullable().optional(),
  expires_at: at.nullable().optional(),
});

/** `POST /v1/boost`: a 2xx means claimed; nothing is required. @example `boostClaimResultSchema.parse(json).expires_at` */
export const boostClaimResultSchema = z.looseObject({
  campaign_id: z.string().optional(),
  claimed: z.boolean().optional(),
  expires_at: at.optional(),
});

/** One credit ledger entry; negative amounts are spend. @example `creditActivitySchema.parse(json.activity[0])` */
export const creditActivitySchema = z.looseObject({
  at: at.optional(),
  amount_micros: signedMicrosSchema.optional(),
  reason: z.string().optional(),
});

/** `GET /v1/credits`. @example `creditsSchema.parse(json).balance_micros` */
export const creditsSchema = z.looseObject({
  balance_micros: microsSchema.optional(),
  activity: z.array(creditActivitySchema).optional(),
});

/** One audience label with its 7-day pageviews. @example `segmentSchema.parse({ label: 'tech', pageviews_7d: 120 })` */
export const segmentSchema = z.looseObject({ label: z.string(), pageviews_7d: count.optional() });

/** `GET /v1/segments`. @example `segmentListSchema.parse({ segments: [] })` */
export const segmentListSchema = z.looseObject({ segments: z.array(segmentSchema) });

/** The key owner. */
export type Me = z.infer<typeof meSchema>;
/** A campaign as returned by the service. */
export type Campaign = z.infer<typeof campaignSchema>;
/** A list of campaigns. */
export type CampaignList = z.infer<typeof campaignListSchema>;
/** Result of `campaigns.plan`. */
export type CampaignPlan = z.infer<typeof campaignPlanResultSchema>;
/** A refund record. */
export type RefundRecord = z.infer<typeof refundRecordSchema>;
/** Result of `refunds.list`. */
export type RefundList = z.infer<typeof refundListSchema>;
/** Result of `conversions.confirm`. */
export type ConversionConfirmation = z.infer<typeof conversionConfirmationSchema>;
/** Result of `conversions.refund`. */
export type ConversionReversal = z.infer<typeof conversionReversalSchema>;
/** A site. */
export type Site = z.infer<typeof siteSchema>;
/** Result of `sites.list`. */
export type SiteList = z.infer<typeof siteListSchema>;
/** Result of `sites.verify`. */
export type SiteVerification = z.infer<typeof siteVerificationSchema>;
/** A placement. */
export type Placement = z.infer<typeof placementSchema>;
/** Result of `placements.list`. */
export type PlacementList = z.infer<typeof placementListSchema>;
/** Result of `placements.live`. */
export type PlacementLiveness = z.infer<typeof placementLivenessSchema>;
/** Result of `boost.get`. */
export type BoostStatus = z.infer<typeof boostStatusSchema>;
/** Result of `boost.claim`. */
export type BoostClaimResult = z.infer<typeof boostClaimResultSchema>;
/** Result of `credits.get`. */
export type Credits = z.infer<typeof creditsSchema>;
/** Result of `segments.list`. */
export type SegmentList = z.infer<typeof segmentListSchema>;

/**
 * Zod schemas of every response body (WIRE.md). Known fields are typed and validated; unknown fields are
 * kept (`looseObject`), so a field the service adds later reaches the caller instead of being dropped.
 */
import * as z from 'zod';
import {
  campaignIdSchema,
  conversionSourceSchema,
  creativeFormatSchema,
  microsSchema,
  pricingModelSchema,
  signedMicrosSchema,
  timestampSchema,
  verificationMethodSchema,
} from './common.ts';

const id = z.string().min(1);
const count = z.int().min(0);

/**
 * `GET /v1/me`: who the key belongs to.
 *
 * @example
 * ```ts
 * meSchema.parse({ account_id: 'acct_1', scopes: ['read'] });
 * ```
 */
export const meSchema = z.looseObject({ account_id: id, scopes: z.array(z.string()) });

/** A creative as the service returns it. @example `creativeRecordSchema.parse(campaign.creatives[0])` */
export const creativeRecordSchema = z.looseObject({
  headline: z.string(),
  body: z.string(),
  cta: z.string(),
  landing_url: z.string(),
  format: creativeFormatSchema,
});

/**
 * A campaign. Budget fields are null for cross_promo campaigns; `status` is kept as a string because the
 * spec names only `review`.
 *
 * @example
 * ```ts
 * const campaign = campaignSchema.parse(json);
 * ```
 */
export const campaignSchema = z.looseObject({
  id: campaignIdSchema,
  name: z.string(),
  pricing_model: pricingModelSchema,
  status: z.string().min(1),
  bid_micros: microsSchema,
  total_budget_micros: microsSchema.nullable(),
  daily_cap_micros: microsSchema.nullable(),
  spend_micros: microsSchema,
  conversion_source: conversionSourceSchema,
  target_categories: z.array(z.string()),
  target_segments: z.array(z.string()),
  exclude_segments: z.array(z.string()),
  creatives: z.array(creativeRecordSchema),
  created_at: timestampSchema,
});

/** `GET /v1/campaigns`. @example `campaignListSchema.parse({ campaigns: [] })` */
export const campaignListSchema = z.looseObject({ campaigns: z.array(campaignSchema) });

/**
 * `POST /v1/campaigns/plan`: starting bid, reach forecast and reserve.
 *
 * @example
 * ```ts
 * campaignPlanResultSchema.parse({ starting_bid_micros: 1, reach_forecast: { impressions: 1, clicks: 0 }, reserve_micros: 1 });
 * ```
 */
export const campaignPlanResultSchema = z.looseObject({
  starting_bid_micros: microsSchema,
  reach_forecast: z.looseObject({ impressions: count, clicks: count }),
  reserve_micros: microsSchema,
});

/** A click that was filtered and not billed. @example `refundRecordSchema.parse(json.refunds[0])` */
export const refundRecordSchema = z.looseObject({
  id,
  campaign_id: campaignIdSchema,
  reason: z.string(),
  amount_micros: microsSchema,
  created_at: timestampSchema,
});

/** `GET /v1/refunds`. @example `refundListSchema.parse({ refunds: [] })` */
export const refundListSchema = z.looseObject({ refunds: z.array(refundRecordSchema) });

/**
 * `POST /v1/conversions/s2s`: the confirmation. `duplicate` is true when the `order_id` was already
 * confirmed (a retry): the order is charged once either way. `campaign_id` is what a later reversal needs.
 *
 * @example
 * ```ts
 * const { campaign_id, duplicate } = conversionConfirmationSchema.parse(json);
 * ```
 */
export const conversionConfirmationSchema = z.looseObject({
  order_id: z.string(),
  campaign_id: campaignIdSchema,
  value_micros: microsSchema,
  status: z.literal('confirmed'),
  confirmed_at: timestampSchema,
  duplicate: z.boolean(),
});

/**
 * `POST /v1/conversions/s2s/refund`: the reversal. `duplicate` is true when it was already reversed.
 *
 * @example
 * ```ts
 * const { reversed_at } = conversionReversalSchema.parse(json);
 * ```
 */
export const conversionReversalSchema = z.looseObject({
  order_id: z.string(),
  campaign_id: campaignIdSchema,
  status: z.literal('reversed'),
  reversed_at: timestampSchema,
  duplicate: z.boolean(),
});

/** A registered site with its verification instructions. @example `siteSchema.parse(json)` */
export const siteSchema = z.looseObject({
  id,
  domain: z.string(),
  verified: z.boolean(),
  verification: z.looseObject({ method: verificationMethodSchema, token: z.string() }),
  created_at: timestampSchema,
});

/** `GET /v1/sites`. @example `siteListSchema.parse({ sites: [] })` */
export const siteListSchema = z.looseObject({ sites: z.array(siteSchema) });

/** `POST /v1/sites/{site_id}/verify`. @example `siteVerificationSchema.parse(json).verified` */
export const siteVerificationSchema = z.looseObject({
  site_id: id,
  verified: z.boolean(),
  method: verificationMethodSchema,
  checked_at: timestampSchema,
});

/** A placement (ad slot) on a site. @example `placementSchema.parse(json)` */
export const placementSchema = z.looseObject({
  id,
  site_id: id,
  name: z.string(),
  format: creativeFormatSchema,
  created_at: timestampSchema,
});

/** `GET /v1/placements`. @example `placementListSchema.parse({ placements: [] })` */
export const placementListSchema = z.looseObject({ placements: z.array(placementSchema) });

/** `GET /v1/placements/{placement_id}/live`: requests in the last 24 hours. @example `placementLivenessSchema.parse(json).live` */
export const placementLivenessSchema = z.looseObject({
  placement_id: id,
  live: z.boolean(),
  last_request_at: timestampSchema.nullable(),
});

/** `GET /v1/boost`. @example `boostStatusSchema.parse(json).available` */
export const boostStatusSchema = z.looseObject({
  available: z.boolean(),
  claimed_campaign_id: campaignIdSchema.nullable(),
  expires_at: timestampSchema.nullable(),
});

/** `POST /v1/boost`. @example `boostClaimResultSchema.parse(json).expires_at` */
export const boostClaimResultSchema = z.looseObject({
  campaign_id: campaignIdSchema,
  claimed: z.literal(true),
  expires_at: timestampSchema,
});

/** One credit ledger entry; negative amounts are spend. @example `creditActivitySchema.parse(json.activity[0])` */
export const creditActivitySchema = z.looseObject({
  at: timestampSchema,
  amount_micros: signedMicrosSchema,
  reason: z.string(),
});

/** `GET /v1/credits`. @example `creditsSchema.parse(json).balance_micros` */
export const creditsSchema = z.looseObject({
  balance_micros: microsSchema,
  activity: z.array(creditActivitySchema),
});

/** One audience label with its 7-day pageviews. @example `segmentSchema.parse({ label: 'tech', pageviews_7d: 120 })` */
export const segmentSchema = z.looseObject({ label: z.string(), pageviews_7d: count });

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

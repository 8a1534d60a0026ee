/**
 * Zod schemas of every request the client sends, in the wire's snake_case. The client parses each request
 * with these before anything goes on the wire (the sandbox checks requests with its own reading of the spec).
 * Bodies are strict: an unknown key is a typo, reported by its field path instead of silently sent.
 */
import * as z from 'zod';
import {
  campaignIdSchema,
  conversionSourceSchema,
  creativeFormatSchema,
  domainSchema,
  httpUrlSchema,
  microsSchema,
  nonEmptyString,
  pricingModelSchema,
  verificationMethodSchema,
} from './common.ts';

/** Most creatives one campaign creation may carry (the spec gives no bound: our choice). */
export const MAX_CREATIVES = 20;

/**
 * One ad of a campaign. `format` defaults to `card`, the only value the spec names.
 *
 * @example
 * ```ts
 * creativeSchema.parse({ headline: 'Hi', body: 'Buy', cta: 'Go', landing_url: 'https://shop.example/' });
 * ```
 */
export const creativeSchema = z.strictObject({
  headline: nonEmptyString,
  body: nonEmptyString,
  cta: nonEmptyString,
  landing_url: httpUrlSchema,
  format: creativeFormatSchema.default('card'),
});

/**
 * `POST /v1/campaigns`. Required: `name`, `pricing_model`, `bid_micros`, `creatives` (at least one).
 * Budget fields are optional and may be null (cross_promo campaigns have no cash budget).
 *
 * @example
 * ```ts
 * campaignCreateSchema.parse({ name: 'Launch', pricing_model: 'cpa', bid_micros: 2_000_000,
 *   total_budget_micros: 100_000_000, creatives: [creative], conversion_source: 's2s' });
 * ```
 */
export const campaignCreateSchema = z.strictObject({
  name: nonEmptyString,
  pricing_model: pricingModelSchema,
  bid_micros: microsSchema,
  total_budget_micros: microsSchema.nullable().optional(),
  daily_cap_micros: microsSchema.nullable().optional(),
  target_categories: z.array(nonEmptyString).optional(),
  target_segments: z.array(nonEmptyString).optional(),
  exclude_segments: z.array(nonEmptyString).optional(),
  creatives: z
    .array(creativeSchema)
    .min(1, { error: 'must hold at least one creative' })
    .max(MAX_CREATIVES, { error: `must hold at most ${MAX_CREATIVES} creatives` }),
  conversion_source: conversionSourceSchema.optional(),
});

/**
 * `POST /v1/campaigns/plan`: a budget, and optionally the pricing model to plan for.
 *
 * @example
 * ```ts
 * campaignPlanSchema.parse({ total_budget_micros: 50_000_000, pricing_model: 'cpc' });
 * ```
 */
export const campaignPlanSchema = z.strictObject({
  total_budget_micros: microsSchema,
  pricing_model: pricingModelSchema.optional(),
});

/**
 * `GET /v1/refunds?campaign_id=`.
 *
 * @example
 * ```ts
 * refundListQuerySchema.parse({ campaign_id: 'cmp_42' });
 * ```
 */
export const refundListQuerySchema = z.strictObject({ campaign_id: campaignIdSchema });

/**
 * `POST /v1/conversions/s2s`: confirm an order. `order_id` is the idempotency key.
 *
 * @example
 * ```ts
 * conversionConfirmSchema.parse({ click_token: 'tok', order_id: 'ord_1', value_micros: 12_340_000 });
 * ```
 */
export const conversionConfirmSchema = z.strictObject({
  click_token: nonEmptyString,
  order_id: nonEmptyString,
  value_micros: microsSchema,
});

/**
 * `POST /v1/conversions/s2s/refund`: reverse a confirmed order inside its return window.
 *
 * @example
 * ```ts
 * conversionRefundSchema.parse({ campaign_id: 'cmp_42', order_id: 'ord_1' });
 * ```
 */
export const conversionRefundSchema = z.strictObject({
  campaign_id: campaignIdSchema,
  order_id: nonEmptyString,
});

/**
 * `POST /v1/sites`: register a domain, optionally choosing how ownership will be checked.
 *
 * @example
 * ```ts
 * siteCreateSchema.parse({ domain: 'blog.example.com', verification_method: 'dns_txt' });
 * ```
 */
export const siteCreateSchema = z.strictObject({
  domain: domainSchema,
  verification_method: verificationMethodSchema.optional(),
});

/**
 * A site id in a path or query (`site_<id>` in the sandbox; the client only requires a non-empty string).
 *
 * @example
 * ```ts
 * siteIdSchema.parse('site_1');
 * ```
 */
export const siteIdSchema = nonEmptyString;

/**
 * A placement id in a path (`plc_<id>` in the sandbox; the client only requires a non-empty string).
 *
 * @example
 * ```ts
 * placementIdSchema.parse('plc_1');
 * ```
 */
export const placementIdSchema = nonEmptyString;

/**
 * `GET /v1/placements?site_id=`.
 *
 * @example
 * ```ts
 * placementListQuerySchema.parse({ site_id: 'site_1' });
 * ```
 */
export const placementListQuerySchema = z.strictObject({ site_id: siteIdSchema });

/**
 * `POST /v1/placements`: a named slot on a site.
 *
 * @example
 * ```ts
 * placementCreateSchema.parse({ site_id: 'site_1', name: 'sidebar', format: 'card' });
 * ```
 */
export const placementCreateSchema = z.strictObject({
  site_id: siteIdSchema,
  name: nonEmptyString,
  format: creativeFormatSchema.optional(),
});

/**
 * `POST /v1/boost`: claim the Launch Day Boost for a campaign.
 *
 * @example
 * ```ts
 * boostClaimSchema.parse({ campaign_id: 'cmp_42' });
 * ```
 */
export const boostClaimSchema = z.strictObject({ campaign_id: campaignIdSchema });

/** Body of `campaigns.create` as the caller writes it (creative `format` may be left out). */
export type CampaignCreate = z.input<typeof campaignCreateSchema>;
/** One creative as the caller writes it. */
export type CreativeInput = z.input<typeof creativeSchema>;
/** Body of `campaigns.plan`. */
export type CampaignPlanRequest = z.input<typeof campaignPlanSchema>;
/** Query of `refunds.list`. */
export type RefundListQuery = z.input<typeof refundListQuerySchema>;
/** Body of `conversions.confirm`. */
export type ConversionConfirm = z.input<typeof conversionConfirmSchema>;
/** Body of `conversions.refund`. */
export type ConversionRefund = z.input<typeof conversionRefundSchema>;
/** Body of `sites.create`. */
export type SiteCreate = z.input<typeof siteCreateSchema>;
/** Query of `placements.list`. */
export type PlacementListQuery = z.input<typeof placementListQuerySchema>;
/** Body of `placements.create`. */
export type PlacementCreate = z.input<typeof placementCreateSchema>;
/** Body of `boost.claim`. */
export type BoostClaim = z.input<typeof boostClaimSchema>;

/**
 * Building blocks shared by the request and response schemas: ids, integer micros, enums, URLs and
 * timestamps, each with the message a user sees when a field is wrong.
 */
import * as z from 'zod';
import type { Micros } from '../money.ts';

/** Longest string the client sends in any free-text or id field (the spec gives no bound: our choice). */
export const MAX_STRING_LENGTH = 2048;

/** Campaign id pattern of the spec: `cmp_<id>`. */
export const CAMPAIGN_ID_PATTERN = /^cmp_[A-Za-z0-9_-]+$/;

/** Pricing models of the spec. */
export const PRICING_MODELS = ['cpc', 'cpm', 'cpa', 'affiliate', 'guaranteed', 'cross_promo'] as const;
/** Creative and placement formats the client knows (the spec names only `card`; others exist). */
export const CREATIVE_FORMATS = ['card'] as const;
/** Conversion sources the client knows (the spec's `s2s`, plus `pixel`, the source s2s replaces). */
export const CONVERSION_SOURCES = ['pixel', 's2s'] as const;
/** The three domain-ownership checks of the spec. */
export const VERIFICATION_METHODS = ['dns_txt', 'file', 'meta_tag'] as const;

/**
 * Integer micros: a non-negative safe integer, never a float or a string. Parses to {@link Micros}.
 *
 * @example
 * ```ts
 * microsSchema.parse(12_340_000); // 12340000 as Micros
 * ```
 */
export const microsSchema = z
  .int({ error: 'must be a non-negative safe integer of micros (never a float or a string)' })
  .min(0, { error: 'must be a non-negative safe integer of micros' })
  .transform((value) => value as Micros);

/**
 * A signed safe integer of micros, for ledger entries that record money leaving a balance.
 *
 * @example
 * ```ts
 * signedMicrosSchema.parse(-500_000);
 * ```
 */
export const signedMicrosSchema = z.int({
  error: 'must be a safe integer of micros (never a float or a string)',
});

/**
 * A non-empty string of at most {@link MAX_STRING_LENGTH} characters.
 *
 * @example
 * ```ts
 * nonEmptyString.parse('ord_1');
 * ```
 */
export const nonEmptyString = z
  .string({ error: 'must be a string' })
  .min(1, { error: 'must not be empty' })
  .max(MAX_STRING_LENGTH, { error: `must be at most ${MAX_STRING_LENGTH} characters` });

/**
 * A campaign id of the form `cmp_<id>`.
 *
 * @example
 * ```ts
 * campaignIdSchema.parse('cmp_42');
 * ```
 */
export const campaignIdSchema = z
  .string({ error: 'must be a campaign id of the form cmp_<id>' })
  .max(MAX_STRING_LENGTH, { error: `must be at most ${MAX_STRING_LENGTH} characters` })
  .regex(CAMPAIGN_ID_PATTERN, { error: 'must be a campaign id of the form cmp_<id>' });

/**
 * An absolute `http:` or `https:` URL.
 *
 * @example
 * ```ts
 * httpUrlSchema.parse('https://shop.example/landing');
 * ```
 */
export const httpUrlSchema = z.url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' });

/**
 * A domain name such as `shop.example.com` (no scheme, path or port).
 *
 * @example
 * ```ts
 * domainSchema.parse('shop.example.com');
 * ```
 */
export const domainSchema = z.string({ error: 'must be a domain name' }).regex(z.regexes.domain, {
  error: 'must be a domain name like shop.example.com (no scheme, path or port)',
});

/**
 * An ISO-8601 timestamp with a `Z` or numeric offset, as the service sends them.
 *
 * @example
 * ```ts
 * timestampSchema.parse('2026-11-22T05:00:00.000Z');
 * ```
 */
export const timestampSchema = z.iso.datetime({ offset: true, error: 'must be an ISO-8601 timestamp' });

/** @example `pricingModelSchema.parse('cpa')` */
export const pricingModelSchema = z.enum(PRICING_MODELS, {
  error: `must be one of ${PRICING_MODELS.join(', ')}`,
});
/** @example `creativeFormatSchema.parse('card')` */
export const creativeFormatSchema = z.enum(CREATIVE_FORMATS, {
  error: `must be one of ${CREATIVE_FORMATS.join(', ')}`,
});
/** @example `conversionSourceSchema.parse('s2s')` */
export const conversionSourceSchema = z.enum(CONVERSION_SOURCES, {
  error: `must be one of ${CONVERSION_SOURCES.join(', ')}`,
});
/** @example `verificationMethodSchema.parse('dns_txt')` */
export const verificationMethodSchema = z.enum(VERIFICATION_METHODS, {
  error: `must be one of ${VERIFICATION_METHODS.join(', ')}`,
});

/**
 * A value of an enum as read from the service: one of the `Known` values, or any other string the
 * service sends (the spec says more values exist and are not shown). Known values still autocomplete.
 *
 * @example
 * ```ts
 * const format: Open<CreativeFormat> = 'banner'; // accepted; 'card' is suggested
 * ```
 */
export type Open<Known extends string> = Known | (string & {});

/**
 * A response-side enum: any string, typed so that the `values` the client knows autocomplete. An
 * unknown value is kept as it came, never an error (requests use the strict enums above).
 *
 * @param values - the values the client knows
 * @example
 * ```ts
 * const format = openEnum(CREATIVE_FORMATS); // parses 'card' and 'banner' alike
 * ```
 */
export function openEnum<const Known extends string>(
  _values: readonly Known[],
): z.ZodType<Open<Known>, Open<Known>> {
  return z.string({ error: 'must be a string' });
}

/** A pricing model as read from the service: the spec's six, or another. @example `openPricingModelSchema.parse('auction')` */
export const openPricingModelSchema = openEnum(PRICING_MODELS);
/** A creative or placement format as read from the service. @example `openCreativeFormatSchema.parse('banner')` */
export const openCreativeFormatSchema = openEnum(CREATIVE_FORMATS);
/** A conversion source as read from the service. @example `openConversionSourceSchema.parse('pixel_and_s2s')` */
export const openConversionSourceSchema = openEnum(CONVERSION_SOURCES);
/** A verification method as read from the service. @example `openVerificationMethodSchema.parse('http_header')` */
export const openVerificationMethodSchema = openEnum(VERIFICATION_METHODS);
/** A campaign status as read from the service (the spec names only `review`). @example `openCampaignStatusSchema.parse('active')` */
export const openCampaignStatusSchema = openEnum(['review'] as const);

/** A pricing model of the spec. */
export type PricingModel = z.infer<typeof pricingModelSchema>;
/** A creative or placement format. */
export type CreativeFormat = z.infer<typeof creativeFormatSchema>;
/** Where a campaign's conversions are billed from. */
export type ConversionSource = z.infer<typeof conversionSourceSchema>;
/** How a site's domain ownership is checked. */
export type VerificationMethod = z.infer<typeof verificationMethodSchema>;

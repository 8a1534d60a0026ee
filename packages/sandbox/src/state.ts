/**
 * Everything the sandbox remembers, in memory: accounts and their keys, campaigns, clicks, conversions,
 * sites, placements, traffic (pageviews, placement requests, domain proofs), refunds and credits.
 * Records are stored in their wire shape where one exists, so answering is a lookup, not a mapping.
 */

/**
 * The scopes an API key can carry (spec, "Authentication").
 * @example
 * ```ts
 * const needed: Scope = 'conversions';
 * ```
 */
export type Scope = 'read' | 'write' | 'conversions';

/** Every scope, in the order `/v1/me` lists them. */
export const ALL_SCOPES: readonly Scope[] = ['read', 'write', 'conversions'];

/**
 * The four keys of an account, named after their scopes (`all` has every scope). Records name a key this
 * way (with its account), never by the key itself, which is a secret.
 * @example
 * ```ts
 * const key: KeyName = 'conversions';
 * ```
 */
export type KeyName = 'read' | 'write' | 'conversions' | 'all';

/** Every key name, in the order `POST /_sandbox/accounts` lists them. */
export const KEY_NAMES: readonly KeyName[] = ['read', 'write', 'conversions', 'all'];

/** An API key: its account, scopes and name, and what its `/v1` requests got (for the request report). */
export interface ApiKey {
  accountId: string;
  scopes: readonly Scope[];
  name: KeyName;
  /** `/v1` requests made with the key, whatever their answer. */
  requests: number;
  /** Of those, refused by the rate-limit fault. */
  rateLimited: number;
  /** Answers by status; `null` for a connection closed without an answer (a reset fault). */
  statuses: Map<number | null, number>;
}

/** Pricing models of the spec. */
export const PRICING_MODELS = ['cpc', 'cpm', 'cpa', 'affiliate', 'guaranteed', 'cross_promo'] as const;
export type PricingModel = (typeof PRICING_MODELS)[number];

/** Campaign statuses. The spec names only `review`; the others are the sandbox's (set by the control API). */
export const CAMPAIGN_STATUSES = ['review', 'active', 'paused', 'rejected', 'completed'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/** Conversion sources: the spec's `s2s` and `pixel` (the default; the spec's other values are not shown). */
export const CONVERSION_SOURCES = ['pixel', 's2s'] as const;
export type ConversionSource = (typeof CONVERSION_SOURCES)[number];

/** Creative and placement formats: the spec names only `card`. */
export const CREATIVE_FORMATS = ['card'] as const;

export const VERIFICATION_METHODS = ['dns_txt', 'file', 'meta_tag'] as const;
export type VerificationMethod = (typeof VERIFICATION_METHODS)[number];

export interface CreativeWire {
  headline: string;
  body: string;
  cta: string;
  landing_url: string;
  format: 'card';
}

export interface CampaignWire {
  id: string;
  name: string;
  pricing_model: PricingModel;
  status: CampaignStatus;
  bid_micros: number;
  total_budget_micros: number | null;
  daily_cap_micros: number | null;
  spend_micros: number;
  conversion_source: ConversionSource;
  target_categories: string[];
  target_segments: string[];
  exclude_segments: string[];
  creatives: CreativeWire[];
  created_at: string;
}

export interface SiteWire {
  id: string;
  domain: string;
  verified: boolean;
  verification: { method: VerificationMethod; token: string };
  created_at: string;
}

export interface PlacementWire {
  id: string;
  site_id: string;
  name: string;
  format: 'card';
  created_at: string;
}

export interface RefundWire {
  id: string;
  campaign_id: string;
  reason: string;
  amount_micros: number;
  created_at: string;
}

export interface CreditActivity {
  at: string;
  amount_micros: number;
  reason: string;
}

/** Per-account counters of `POST /v1/conversions/s2s`, reported by `GET /_sandbox/conversions`. */
export interface ConversionCounts {
  requests: number;
  duplicates: number;
  rejections: number;
  late: number;
}

export interface Account {
  id: string;
  /** Prepaid cash not yet held by a campaign. */
  balanceMicros: number;
  /** Cash held for campaign budgets. */
  heldMicros: number;
  creditMicros: number;
  creditActivity: CreditActivity[];
  boost: { campaignId: string; claimedAt: number; expiresAt: number } | null;
  counts: ConversionCounts;
  /** Orders by `order_id`: the idempotency key of a conversion is per account. */
  orders: Map<string, Conversion>;
  /** Orders billed through the pixel (control API), by `order_id`, with what each charged. */
  pixelOrders: Map<string, number>;
  /**
   * Every key of the account is revoked (control API): each `/v1` request with one answers 401 until
   * they are restored. The keys stay the account's, so restoring them makes the same keys work again.
   */
  keysRevoked: boolean;
}

export interface Campaign {
  accountId: string;
  wire: CampaignWire;
}

export interface Click {
  token: string;
  campaign: Campaign;
  clickedAt: number;
}

export interface Conversion {
  orderId: string;
  campaign: Campaign;
  clickToken: string;
  valueMicros: number;
  /** What the confirmation charged (given back by the reversal). */
  chargeMicros: number;
  clickedAt: number;
  confirmedAt: number;
  /** Set once by the first reversal; a repeated reversal answers with it. */
  reversedAt: number | null;
}

export interface ConfirmAnswer {
  order_id: string;
  campaign_id: string;
  value_micros: number;
  status: 'confirmed';
  confirmed_at: string;
  duplicate: boolean;
}

export interface ReverseAnswer {
  order_id: string;
  campaign_id: string;
  status: 'reversed';
  reversed_at: string;
  duplicate: boolean;
}

export interface Site {
  accountId: string;
  wire: SiteWire;
}

export interface Placement {
  accountId: string;
  wire: PlacementWire;
  lastRequestAt: number | null;
}

export interface Refund {
  accountId: string;
  wire: RefundWire;
}

/** The whole in-memory state; `reset()` empties it. */
export class SandboxState {
  accounts = new Map<string, Account>();
  /** API key → owner and scopes. */
  keys = new Map<string, ApiKey>();
  campaigns = new Map<string, Campaign>();
  clicks = new Map<string, Click>();
  sites = new Map<string, Site>();
  placements = new Map<string, Placement>();
  refunds: Refund[] = [];
  /** Pageviews per segment label, as (time, count) entries; segments are marketplace-wide. */
  pageviews: Array<{ label: string; at: number; count: number }> = [];
  /** Published ownership proofs: (domain, method, token) seen at a time. */
  domainProofs: Array<{ domain: string; method: VerificationMethod; token: string; at: number }> = [];

  reset(): void {
    this.accounts.clear();
    this.keys.clear();
    this.campaigns.clear();
    this.clicks.clear();
    this.sites.clear();
    this.placements.clear();
    this.refunds = [];
    this.pageviews = [];
    this.domainProofs = [];
  }
}

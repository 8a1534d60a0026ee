/**
 * `/v1/campaigns`: list, create (starts in `review`, budget held from the prepaid balance, 402 when too
 * low, cross_promo paid in credit) and plan (starting bid, reach forecast and reserve for a budget).
 */
import type { Answer, V1Context } from '../context.ts';
import { iso, newId } from '../ids.ts';
import { badField, HttpProblem } from '../problem.ts';
import type { Campaign, CampaignWire, CreativeWire, PricingModel } from '../state.ts';
import { CONVERSION_SOURCES, CREATIVE_FORMATS, PRICING_MODELS } from '../state.ts';
import { listedSegments } from '../traffic.ts';
import {
  type Body,
  onlyFields,
  optionalMicros,
  readEnum,
  readHttpUrl,
  readMicros,
  readObject,
  readString,
  readStringList,
} from '../validate.ts';

/** Most creatives one campaign creation may carry (the spec gives no bound: our choice). */
export const MAX_CREATIVES = 20;

const CREATE_FIELDS = [
  'name',
  'pricing_model',
  'bid_micros',
  'total_budget_micros',
  'daily_cap_micros',
  'target_categories',
  'target_segments',
  'exclude_segments',
  'creatives',
  'conversion_source',
] as const;
const CREATIVE_FIELDS = ['headline', 'body', 'cta', 'landing_url', 'format'] as const;

function readCreative(value: unknown, path: string): CreativeWire {
  const c = readObject(value, path);
  const creative: CreativeWire = {
    headline: readString(c, 'headline', `${path}.headline`),
    body: readString(c, 'body', `${path}.body`),
    cta: readString(c, 'cta', `${path}.cta`),
    landing_url: readHttpUrl(c, 'landing_url', `${path}.landing_url`),
    format: readEnum(c, 'format', CREATIVE_FORMATS, 'card', `${path}.format`),
  };
  onlyFields(c, CREATIVE_FIELDS, path);
  return creative;
}

function readCreatives(body: Body): CreativeWire[] {
  const value = body.creatives;
  if (!Array.isArray(value)) throw badField('creatives', 'must be an array of creatives');
  if (value.length === 0) throw badField('creatives', 'must hold at least one creative');
  if (value.length > MAX_CREATIVES)
    throw badField('creatives', `must hold at most ${MAX_CREATIVES} creatives`);
  return value.map((c, i) => readCreative(c, `creatives.${i}`));
}

/** The creation payload (spec, "Resources": Campaign), strictly: unknown fields are refused. */
function readCampaignCreate(body: Body) {
  const input = {
    name: readString(body, 'name'),
    pricing_model: readEnum(body, 'pricing_model', PRICING_MODELS),
    bid_micros: readMicros(body, 'bid_micros'),
    total_budget_micros: optionalMicros(body, 'total_budget_micros'),
    daily_cap_micros: optionalMicros(body, 'daily_cap_micros'),
    target_categories: readStringList(body, 'target_categories'),
    target_segments: readStringList(body, 'target_segments'),
    exclude_segments: readStringList(body, 'exclude_segments'),
    creatives: readCreatives(body),
    conversion_source: readEnum(body, 'conversion_source', CONVERSION_SOURCES, 'pixel'),
  };
  onlyFields(body, CREATE_FIELDS);
  return input;
}

/** Starting bid per pricing model (micros), returned by plan. Sandbox figures, not the service's. */
export const STARTING_BID_MICROS: Readonly<Record<PricingModel, number>> = Object.freeze({
  cpc: 500_000,
  cpm: 2_000_000,
  cpa: 5_000_000,
  affiliate: 3_000_000,
  guaranteed: 4_000_000,
  cross_promo: 300_000,
});

/** GET /v1/campaigns — the caller's campaigns, oldest first. */
export function listCampaigns(ctx: V1Context): Answer {
  const campaigns: CampaignWire[] = [];
  for (const c of ctx.core.state.campaigns.values())
    if (c.accountId === ctx.account.id) campaigns.push(c.wire);
  return { status: 200, body: { campaigns } };
}

/** POST /v1/campaigns */
export function createCampaign(ctx: V1Context): Answer {
  const input = readCampaignCreate(ctx.body);
  const account = ctx.account;
  const pricing = input.pricing_model;
  const bid = input.bid_micros;
  if (bid === 0) throw badField('bid_micros', 'must be greater than 0');
  const targetSegments = input.target_segments;
  const excludeSegments = input.exclude_segments;
  const listed = new Set(listedSegments(ctx.core.state, ctx.now).map((s) => s.label));
  for (const [field, labels] of [
    ['target_segments', targetSegments],
    ['exclude_segments', excludeSegments],
  ] as const) {
    labels.forEach((label, i) => {
      if (!listed.has(label)) {
        throw new HttpProblem(422, `${field}.${i}: segment '${label}' is not listed by GET /v1/segments`);
      }
    });
  }
  const both = targetSegments.find((label) => excludeSegments.includes(label));
  if (both !== undefined) throw new HttpProblem(422, `segment '${both}' is both targeted and excluded`);

  let totalBudget: number | null;
  let dailyCap: number | null;
  if (pricing === 'cross_promo') {
    if (input.total_budget_micros != null || input.daily_cap_micros != null) {
      throw new HttpProblem(
        422,
        'total_budget_micros: cross_promo campaigns are paid in credit and have no cash budget or daily cap',
      );
    }
    if (account.creditMicros < bid) {
      throw new HttpProblem(
        402,
        `cross-promotion credit too low: ${account.creditMicros} micros available, bid is ${bid}`,
      );
    }
    totalBudget = null;
    dailyCap = null;
  } else {
    const budget = input.total_budget_micros;
    if (budget == null) throw badField('total_budget_micros', `is required for pricing model ${pricing}`);
    if (budget === 0) throw badField('total_budget_micros', 'must be greater than 0');
    totalBudget = budget;
    dailyCap = input.daily_cap_micros ?? null;
    if (dailyCap !== null && dailyCap > budget) {
      throw new HttpProblem(422, 'daily_cap_micros: must not exceed total_budget_micros');
    }
    if (budget > account.balanceMicros) {
      throw new HttpProblem(
        402,
        `available balance too low: ${account.balanceMicros} micros available, budget is ${budget}`,
      );
    }
    account.balanceMicros -= budget;
    account.heldMicros += budget;
  }

  const wire: CampaignWire = {
    id: newId('cmp'),
    name: input.name,
    pricing_model: pricing,
    status: 'review',
    bid_micros: bid,
    total_budget_micros: totalBudget,
    daily_cap_micros: dailyCap,
    spend_micros: 0,
    conversion_source: input.conversion_source,
    target_categories: input.target_categories,
    target_segments: targetSegments,
    exclude_segments: excludeSegments,
    creatives: input.creatives,
    created_at: iso(ctx.now),
  };
  const campaign: Campaign = { accountId: account.id, wire };
  ctx.core.state.campaigns.set(wire.id, campaign);
  return { status: 201, body: wire };
}

/**
 * POST /v1/campaigns/plan — deterministic sandbox figures: the starting bid of the model, a forecast at a
 * 2% click-through rate (5% conversion rate for cpa/affiliate), and the reserve = what creation would hold
 * from the prepaid balance (the whole budget; 0 for cross_promo, paid in credit).
 */
export function planCampaign(ctx: V1Context): Answer {
  const budget = readMicros(ctx.body, 'total_budget_micros');
  const pricing = readEnum(ctx.body, 'pricing_model', PRICING_MODELS, 'cpc');
  onlyFields(ctx.body, ['total_budget_micros', 'pricing_model']);
  if (budget === 0) throw badField('total_budget_micros', 'must be greater than 0');
  const bid = STARTING_BID_MICROS[pricing];
  let impressions: number;
  let clicks: number;
  if (pricing === 'cpm' || pricing === 'guaranteed') {
    impressions = Math.floor((budget * 1000) / bid);
    clicks = Math.floor(impressions / 50);
  } else if (pricing === 'cpa' || pricing === 'affiliate') {
    clicks = Math.floor(budget / bid) * 20;
    impressions = clicks * 50;
  } else {
    clicks = Math.floor(budget / bid);
    impressions = clicks * 50;
  }
  return {
    status: 200,
    body: {
      starting_bid_micros: bid,
      reach_forecast: { impressions, clicks },
      reserve_micros: pricing === 'cross_promo' ? 0 : budget,
    },
  };
}

/**
 * The control API under `/_sandbox/` (no authentication): create accounts and keys (and revoke or
 * restore them), simulate clicks, traffic, domain proofs, filtered clicks and pixel fires, move the
 * clock, inspect conversions, inject faults and reset. Every route is documented in the package README.
 */
import type { Answer, RequestContext } from '../context.ts';
import { NO_FAULTS, parseFaultConfig } from '../faults.ts';
import { iso, newApiKey, newClickToken, newId } from '../ids.ts';
import { badField, HttpProblem, notFound } from '../problem.ts';
import type { Account, Campaign, ConversionCounts, KeyName, Scope } from '../state.ts';
import { ALL_SCOPES, CAMPAIGN_STATUSES, CONVERSION_SOURCES, VERIFICATION_METHODS } from '../state.ts';
import { listedSegments } from '../traffic.ts';
import { normalizeDomain } from '../v1/sites.ts';
import { onlyFields, readEnum, readMicros, readString } from '../validate.ts';
import { SANDBOX_VARIANTS, type SandboxVariant, variantListProblem } from '../variants.ts';
import { clearRequests, listRequests } from './requests.ts';

/**
 * Prepaid balance of a new sandbox account when `balance_micros` is not given (1,000 USD).
 * @defaultValue 1_000_000_000
 * @example
 * ```ts
 * await control.createAccount(); // balance_micros: DEFAULT_ACCOUNT_BALANCE_MICROS
 * ```
 */
export const DEFAULT_ACCOUNT_BALANCE_MICROS = 1_000_000_000;

export interface ControlRoute {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  handler: (ctx: RequestContext) => Answer;
}

function optionalMicros(ctx: RequestContext, field: string, fallback: number): number {
  return ctx.body[field] === undefined ? fallback : readMicros(ctx.body, field);
}

function optionalCount(ctx: RequestContext, field: string): number {
  const v = ctx.body[field];
  if (v === undefined) return 1;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1)
    throw badField(field, 'must be a positive integer');
  return v;
}

function campaignById(ctx: RequestContext, id: string): Campaign {
  const campaign = ctx.core.state.campaigns.get(id);
  if (campaign === undefined) throw notFound('campaign', id);
  return campaign;
}

function createAccount(ctx: RequestContext): Answer {
  const balance = optionalMicros(ctx, 'balance_micros', DEFAULT_ACCOUNT_BALANCE_MICROS);
  const credit = optionalMicros(ctx, 'credit_micros', 0);
  const account: Account = {
    id: newId('acct'),
    balanceMicros: balance,
    heldMicros: 0,
    creditMicros: credit,
    creditActivity: credit > 0 ? [{ at: iso(ctx.now), amount_micros: credit, reason: 'grant' }] : [],
    boost: null,
    counts: { requests: 0, duplicates: 0, rejections: 0, late: 0 },
    orders: new Map(),
    pixelOrders: new Map(),
    keysRevoked: false,
  };
  const state = ctx.core.state;
  state.accounts.set(account.id, account);
  const issue = (name: KeyName, scopes: readonly Scope[]): string => {
    const key = newApiKey();
    state.keys.set(key, {
      accountId: account.id,
      scopes,
      name,
      requests: 0,
      rateLimited: 0,
      statuses: new Map(),
    });
    return key;
  };
  const keys = {
    read: issue('read', ['read']),
    write: issue('write', ['write']),
    conversions: issue('conversions', ['conversions']),
    all: issue('all', ALL_SCOPES),
  };
  return { status: 201, body: { account_id: account.id, keys } };
}

function getAccount(ctx: RequestContext): Answer {
  const id = ctx.params[0] ?? '';
  const a = ctx.core.state.accounts.get(id);
  if (a === undefined) throw notFound('account', id);
  return {
    status: 200,
    body: {
      account_id: a.id,
      balance_micros: a.balanceMicros,
      held_micros: a.heldMicros,
      credit_micros: a.creditMicros,
    },
  };
}

/**
 * Revokes (`revoked: true`) or restores (`revoked: false`) every key of an account: what an advertiser
 * does when a key leaks, or an ad service does to an account it suspends. Idempotent.
 */
function setKeysRevoked(ctx: RequestContext): Answer {
  const id = ctx.params[0] ?? '';
  const account = ctx.core.state.accounts.get(id);
  if (account === undefined) throw notFound('account', id);
  for (const key of Object.keys(ctx.body)) if (key !== 'revoked') throw badField(key, 'is not a known field');
  const revoked = ctx.body.revoked;
  if (typeof revoked !== 'boolean') throw badField('revoked', 'must be true or false');
  account.keysRevoked = revoked;
  return { status: 200, body: { account_id: account.id, revoked } };
}

function createClick(ctx: RequestContext): Answer {
  const campaign = campaignById(ctx, readString(ctx.body, 'campaign_id'));
  const creative = campaign.wire.creatives[0];
  if (creative === undefined) throw new HttpProblem(422, `campaign ${campaign.wire.id} has no creative`);
  const token = newClickToken();
  ctx.core.state.clicks.set(token, { token, campaign, clickedAt: ctx.now });
  const landing = new URL(creative.landing_url);
  landing.searchParams.set(ctx.core.options.clickParam, token);
  return {
    status: 201,
    body: { click_token: token, clicked_at: iso(ctx.now), landing_url: landing.toString() },
  };
}

function clockNow(ctx: RequestContext): Answer {
  return { status: 200, body: { now: iso(ctx.core.clock.now()) } };
}

function advanceClock(ctx: RequestContext): Answer {
  const v = ctx.body.advance_seconds;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 100 * 365 * 86_400) {
    throw badField('advance_seconds', 'must be a non-negative number of seconds');
  }
  return { status: 200, body: { now: iso(ctx.core.clock.advance(Math.round(v * 1000))) } };
}

function conversions(ctx: RequestContext): Answer {
  const filter = ctx.query.get('account_id');
  const orderFilter = ctx.query.get('order_id');
  const state = ctx.core.state;
  let accounts: Account[];
  if (filter === null) accounts = [...state.accounts.values()];
  else {
    const account = state.accounts.get(filter);
    if (account === undefined) throw notFound('account', filter);
    accounts = [account];
  }
  const counts: ConversionCounts = { requests: 0, duplicates: 0, rejections: 0, late: 0 };
  const list = [];
  for (const a of accounts) {
    counts.requests += a.counts.requests;
    counts.duplicates += a.counts.duplicates;
    counts.rejections += a.counts.rejections;
    counts.late += a.counts.late;
    for (const c of a.orders.values()) {
      if (orderFilter !== null && c.orderId !== orderFilter) continue;
      list.push({
        account_id: a.id,
        order_id: c.orderId,
        campaign_id: c.campaign.wire.id,
        value_micros: c.valueMicros,
        charged_micros: c.chargeMicros,
        state: c.reversedAt === null ? 'confirmed' : 'reversed',
        clicked_at: iso(c.clickedAt),
        confirmed_at: iso(c.confirmedAt),
        reversed_at: c.reversedAt === null ? null : iso(c.reversedAt),
      });
    }
  }
  return { status: 200, body: { conversions: list, counts } };
}

function setFaults(ctx: RequestContext): Answer {
  ctx.core.faults.set(parseFaultConfig(ctx.body));
  return { status: 200, body: ctx.core.faults.config };
}

function getFaults(ctx: RequestContext): Answer {
  return { status: 200, body: ctx.core.faults.config };
}

function clearFaults(ctx: RequestContext): Answer {
  ctx.core.faults.clear();
  return { status: 200, body: { ...NO_FAULTS } };
}

function variantsAnswer(ctx: RequestContext): Answer {
  return { status: 200, body: { variants: ctx.core.variants.list(), available: [...SANDBOX_VARIANTS] } };
}

function setVariants(ctx: RequestContext): Answer {
  for (const key of Object.keys(ctx.body))
    if (key !== 'variants') throw badField(key, 'is not a known field');
  const problem = variantListProblem(ctx.body.variants);
  if (problem !== null) throw badField('variants', problem);
  ctx.core.variants.set(ctx.body.variants as SandboxVariant[]);
  return variantsAnswer(ctx);
}

function clearVariants(ctx: RequestContext): Answer {
  ctx.core.variants.set([]);
  return variantsAnswer(ctx);
}

function reset(ctx: RequestContext): Answer {
  ctx.core.state.reset();
  ctx.core.requests.clear();
  ctx.core.faults.set(parseFaultConfig(ctx.core.options.faults));
  ctx.core.variants.reset();
  ctx.core.clock.reset();
  return { status: 200, body: { reset: true, now: iso(ctx.core.clock.now()) } };
}

function recordPageviews(ctx: RequestContext): Answer {
  const label = readString(ctx.body, 'label', 'label', 200);
  const count = optionalCount(ctx, 'count');
  ctx.core.state.pageviews.push({ label, at: ctx.now, count });
  const listed = listedSegments(ctx.core.state, ctx.now).find((s) => s.label === label);
  return { status: 201, body: { label, recorded: count, at: iso(ctx.now), listed: listed !== undefined } };
}

function recordPlacementRequests(ctx: RequestContext): Answer {
  const id = readString(ctx.body, 'placement_id', 'placement_id', 64);
  const placement = ctx.core.state.placements.get(id);
  if (placement === undefined) throw notFound('placement', id);
  placement.lastRequestAt = ctx.now;
  return { status: 201, body: { placement_id: id, last_request_at: iso(ctx.now) } };
}

function recordDomainProof(ctx: RequestContext): Answer {
  const domain = normalizeDomain(readString(ctx.body, 'domain', 'domain', 253));
  const method = readEnum(ctx.body, 'method', VERIFICATION_METHODS);
  const token = readString(ctx.body, 'token', 'token', 200);
  ctx.core.state.domainProofs.push({ domain, method, token, at: ctx.now });
  return { status: 201, body: { domain, method, recorded_at: iso(ctx.now) } };
}

function recordRefund(ctx: RequestContext): Answer {
  const campaign = campaignById(ctx, readString(ctx.body, 'campaign_id'));
  const reason = readString(ctx.body, 'reason', 'reason', 200);
  const amount = optionalMicros(ctx, 'amount_micros', campaign.wire.bid_micros);
  const wire = {
    id: newId('rfd'),
    campaign_id: campaign.wire.id,
    reason,
    amount_micros: amount,
    created_at: iso(ctx.now),
  };
  ctx.core.state.refunds.push({ accountId: campaign.accountId, wire });
  return { status: 201, body: wire };
}

function setCampaignStatus(ctx: RequestContext): Answer {
  const campaign = campaignById(ctx, ctx.params[0] ?? '');
  campaign.wire.status = readEnum(ctx.body, 'status', CAMPAIGN_STATUSES);
  return { status: 200, body: campaign.wire };
}

/**
 * Switches a campaign's conversion source (`s2s` or `pixel`): what an advertiser does in the dashboard
 * (the spec does not show how the source is set). From then on the s2s endpoints refuse the campaign with
 * 422 while it is on `pixel`, and accept it again once it is back on `s2s`; what was applied stays.
 */
function setConversionSource(ctx: RequestContext): Answer {
  const campaign = campaignById(ctx, ctx.params[0] ?? '');
  const source = readEnum(ctx.body, 'conversion_source', CONVERSION_SOURCES);
  onlyFields(ctx.body, ['conversion_source']);
  campaign.wire.conversion_source = source;
  return { status: 200, body: campaign.wire };
}

/**
 * A pixel fire for a click: bills pixel campaigns (cpa, affiliate, cross_promo: their bid, once per
 * `order_id`) and never s2s campaigns, whose pixel billing is off (spec, rule 1).
 */
function firePixel(ctx: RequestContext): Answer {
  const token = readString(ctx.body, 'click_token', 'click_token', 256);
  const orderId = readString(ctx.body, 'order_id', 'order_id', 256);
  const click = ctx.core.state.clicks.get(token);
  if (click === undefined) throw new HttpProblem(404, 'click_token not found');
  const campaign = click.campaign.wire;
  const account = ctx.core.state.accounts.get(click.campaign.accountId) as Account;
  const billable =
    campaign.conversion_source === 'pixel' &&
    ['cpa', 'affiliate', 'cross_promo'].includes(campaign.pricing_model) &&
    !account.pixelOrders.has(orderId);
  let charged = 0;
  if (billable) {
    if (campaign.total_budget_micros === null) {
      charged = Math.min(campaign.bid_micros, account.creditMicros);
      account.creditMicros -= charged;
      if (charged > 0)
        account.creditActivity.push({
          at: iso(ctx.now),
          amount_micros: -charged,
          reason: `pixel ${orderId}`,
        });
    } else {
      charged = Math.min(campaign.bid_micros, campaign.total_budget_micros - campaign.spend_micros);
      account.heldMicros -= charged;
    }
    campaign.spend_micros += charged;
    account.pixelOrders.set(orderId, charged);
  }
  return {
    status: 200,
    body: { campaign_id: campaign.id, order_id: orderId, billed: billable, charged_micros: charged },
  };
}

/** Every control route. */
export const CONTROL_ROUTES: readonly ControlRoute[] = [
  { method: 'POST', path: '/_sandbox/accounts', handler: createAccount },
  { method: 'GET', path: '/_sandbox/accounts/{account_id}', handler: getAccount },
  { method: 'POST', path: '/_sandbox/accounts/{account_id}/keys', handler: setKeysRevoked },
  { method: 'POST', path: '/_sandbox/clicks', handler: createClick },
  { method: 'GET', path: '/_sandbox/clock', handler: clockNow },
  { method: 'POST', path: '/_sandbox/clock', handler: advanceClock },
  { method: 'GET', path: '/_sandbox/conversions', handler: conversions },
  { method: 'GET', path: '/_sandbox/faults', handler: getFaults },
  { method: 'POST', path: '/_sandbox/faults', handler: setFaults },
  { method: 'DELETE', path: '/_sandbox/faults', handler: clearFaults },
  { method: 'GET', path: '/_sandbox/requests', handler: listRequests },
  { method: 'DELETE', path: '/_sandbox/requests', handler: clearRequests },
  { method: 'GET', path: '/_sandbox/variants', handler: variantsAnswer },
  { method: 'POST', path: '/_sandbox/variants', handler: setVariants },
  { method: 'DELETE', path: '/_sandbox/variants', handler: clearVariants },
  { method: 'POST', path: '/_sandbox/reset', handler: reset },
  { method: 'POST', path: '/_sandbox/pageviews', handler: recordPageviews },
  { method: 'POST', path: '/_sandbox/placement-requests', handler: recordPlacementRequests },
  { method: 'POST', path: '/_sandbox/domain-proofs', handler: recordDomainProof },
  { method: 'POST', path: '/_sandbox/refunds', handler: recordRefund },
  { method: 'POST', path: '/_sandbox/campaigns/{campaign_id}/status', handler: setCampaignStatus },
  {
    method: 'POST',
    path: '/_sandbox/campaigns/{campaign_id}/conversion-source',
    handler: setConversionSource,
  },
  { method: 'POST', path: '/_sandbox/pixel', handler: firePixel },
];

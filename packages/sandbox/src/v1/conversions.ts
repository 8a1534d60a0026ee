/**
 * The s2s endpoints: confirmation (7 days after the click, s2s campaigns only, idempotent by `order_id`,
 * never charged twice) and reversal (confirmed orders only, inside the return window, idempotent).
 * This is the hot path of the benchmark: a hand-written body parser, map lookups, one object per order.
 */
import type { Answer, V1Context } from '../context.ts';
import { iso } from '../ids.ts';
import { HttpProblem, notFound } from '../problem.ts';
import type { Account, Campaign, ConfirmAnswer, Conversion, ReverseAnswer } from '../state.ts';
import { CONFIRM_WINDOW_MS, DAY_MS } from '../traffic.ts';
import { onlyFields, readCampaignId, readString } from '../validate.ts';
import { parseConfirmBody } from './confirm-body.ts';

/** Models whose conversions are billed (their bid is a price per conversion); others record them free. */
const BILLS_CONVERSIONS = new Set(['cpa', 'affiliate', 'cross_promo']);

/**
 * The 422 detail for a campaign not on s2s (spec, rule 1). The real service's wording is not shown; this
 * one is documented in the README and always names the campaign (`cmp_…`) and says "not on s2s", so a
 * client can hold every order of that campaign until it is switched. It says nothing a window-closed
 * pattern would read as a closed window.
 */
export function notOnS2sDetail(campaignId: string, source: string): string {
  return `campaign ${campaignId} is not on s2s: its conversion source is ${source}, and the s2s endpoints apply only to campaigns whose conversion source is s2s`;
}

function requireS2s(campaign: Campaign): void {
  const source = campaign.wire.conversion_source;
  if (source !== 's2s') throw new HttpProblem(422, notOnS2sDetail(campaign.wire.id, source));
}

/** Charges the campaign for one conversion: its bid, capped by what is left of its budget (or credit). */
function charge(account: Account, campaign: Campaign, now: number, orderId: string): number {
  const w = campaign.wire;
  if (!BILLS_CONVERSIONS.has(w.pricing_model)) return 0;
  if (w.total_budget_micros === null) {
    const amount = Math.min(w.bid_micros, account.creditMicros);
    if (amount > 0) {
      account.creditMicros -= amount;
      account.creditActivity.push({ at: iso(now), amount_micros: -amount, reason: `conversion ${orderId}` });
    }
    w.spend_micros += amount;
    return amount;
  }
  const amount = Math.min(w.bid_micros, w.total_budget_micros - w.spend_micros);
  w.spend_micros += amount;
  account.heldMicros -= amount;
  return amount;
}

function giveBack(account: Account, conversion: Conversion, now: number): void {
  const amount = conversion.chargeMicros;
  if (amount === 0) return;
  const w = conversion.campaign.wire;
  w.spend_micros -= amount;
  if (w.total_budget_micros === null) {
    account.creditMicros += amount;
    account.creditActivity.push({
      at: iso(now),
      amount_micros: amount,
      reason: `reversal ${conversion.orderId}`,
    });
  } else {
    account.heldMicros += amount;
  }
}

/** POST /v1/conversions/s2s */
export function confirmConversion(ctx: V1Context): Answer {
  const account = ctx.account;
  const counts = account.counts;
  counts.requests += 1;
  try {
    if (ctx.core.variants.refuseKey) {
      // The variant refuse-key: a misbehaving service that puts the caller's key in its refusal.
      throw new HttpProblem(422, `key ${ctx.apiKey} is not allowed to confirm conversions`);
    }
    return confirm(ctx, account);
  } catch (err) {
    counts.rejections += 1;
    throw err;
  }
}

function confirm(ctx: V1Context, account: Account): Answer {
  const input = parseConfirmBody(ctx.body);
  const token = input.click_token;
  const orderId = input.order_id;
  const value: number = input.value_micros;
  const now = ctx.now;

  const click = ctx.core.state.clicks.get(token);
  if (click === undefined || click.campaign.accountId !== account.id)
    throw new HttpProblem(404, 'click_token not found');
  const late = now - click.clickedAt > CONFIRM_WINDOW_MS;
  if (late) account.counts.late += 1;

  const existing = account.orders.get(orderId);
  if (existing !== undefined) {
    if (existing.clickToken !== token || existing.valueMicros !== value) {
      throw new HttpProblem(
        409,
        `order_id ${orderId} was already confirmed with a different click_token or value_micros`,
      );
    }
    if (existing.reversedAt !== null) {
      throw new HttpProblem(
        409,
        `order_id ${orderId} was reversed at ${iso(existing.reversedAt)}; it cannot be confirmed again`,
      );
    }
    account.counts.duplicates += 1;
    return { status: 200, body: confirmAnswer(existing, true) };
  }

  requireS2s(click.campaign);
  if (late) {
    throw new HttpProblem(
      422,
      `click is older than 7 days (clicked at ${iso(click.clickedAt)}); confirmations are accepted for 7 days after the click`,
    );
  }

  const campaign = click.campaign;
  // One object per order and no stored answer: the benchmark keeps ~100k orders alive, and every retained
  // object is paid for again by each garbage collection.
  const conversion: Conversion = {
    orderId,
    campaign,
    clickToken: token,
    valueMicros: value,
    chargeMicros: charge(account, campaign, now, orderId),
    clickedAt: click.clickedAt,
    confirmedAt: now,
    reversedAt: null,
  };
  account.orders.set(orderId, conversion);
  return { status: 200, body: confirmAnswer(conversion, false) };
}

/** The confirmation answer; a duplicate gets the same fields (same `confirmed_at`) with `duplicate: true`. */
function confirmAnswer(c: Conversion, duplicate: boolean): ConfirmAnswer {
  return {
    order_id: c.orderId,
    campaign_id: c.campaign.wire.id,
    value_micros: c.valueMicros,
    status: 'confirmed',
    confirmed_at: iso(c.confirmedAt),
    duplicate,
  };
}

function reverseAnswer(c: Conversion, reversedAt: number, duplicate: boolean): ReverseAnswer {
  return {
    order_id: c.orderId,
    campaign_id: c.campaign.wire.id,
    status: 'reversed',
    reversed_at: iso(reversedAt),
    duplicate,
  };
}

/** POST /v1/conversions/s2s/refund */
export function reverseConversion(ctx: V1Context): Answer {
  const account = ctx.account;
  const campaignId = readCampaignId(ctx.body);
  const orderId = readString(ctx.body, 'order_id');
  onlyFields(ctx.body, ['campaign_id', 'order_id']);
  const campaign = ctx.core.state.campaigns.get(campaignId);
  if (campaign === undefined || campaign.accountId !== account.id) throw notFound('campaign', campaignId);
  const found = account.orders.get(orderId);
  const conversion = found !== undefined && found.campaign === campaign ? found : undefined;
  // A repeat gets the original answer, even once the campaign left s2s: it is the same result.
  if (conversion !== undefined && conversion.reversedAt !== null)
    return { status: 200, body: reverseAnswer(conversion, conversion.reversedAt, true) };
  requireS2s(campaign);
  if (conversion === undefined) {
    throw new HttpProblem(404, `no confirmed order ${orderId} for campaign ${campaignId}`);
  }
  const windowMs = ctx.core.options.returnWindowDays * DAY_MS;
  if (ctx.now - conversion.confirmedAt > windowMs) {
    throw new HttpProblem(
      422,
      `return window closed: order ${orderId} was confirmed at ${iso(conversion.confirmedAt)} and may be reversed for ${ctx.core.options.returnWindowDays} days`,
    );
  }
  conversion.reversedAt = ctx.now;
  giveBack(account, conversion, ctx.now);
  return { status: 200, body: reverseAnswer(conversion, ctx.now, false) };
}

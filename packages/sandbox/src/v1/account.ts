/**
 * Account-level `/v1` endpoints: the key owner, refunds of filtered clicks, the Launch Day Boost,
 * cross-promotion credits and audience segments.
 */
import type { Answer, V1Context } from '../context.ts';
import { iso } from '../ids.ts';
import { HttpProblem, notFound } from '../problem.ts';
import { DAY_MS, listedSegments } from '../traffic.ts';
import { onlyFields, readCampaignId, readQuery } from '../validate.ts';

/** How long a claimed Launch Day Boost lasts (not in the spec: one day). */
export const BOOST_DURATION_MS = DAY_MS;

/** Most credit activity entries returned ("recent activity"; the spec gives no number). */
export const CREDIT_ACTIVITY_LIMIT = 50;

/** GET /v1/me */
export function me(ctx: V1Context): Answer {
  return { status: 200, body: { account_id: ctx.account.id, scopes: [...ctx.scopes] } };
}

/** GET /v1/refunds?campaign_id= — filtered clicks of one own campaign. */
export function listRefunds(ctx: V1Context): Answer {
  const campaignId = readCampaignId({ campaign_id: readQuery(ctx.query, 'campaign_id') });
  const campaign = ctx.core.state.campaigns.get(campaignId);
  if (campaign === undefined || campaign.accountId !== ctx.account.id) throw notFound('campaign', campaignId);
  const refunds = ctx.core.state.refunds.filter((r) => r.wire.campaign_id === campaignId).map((r) => r.wire);
  return { status: 200, body: { refunds } };
}

/** GET /v1/boost — one boost per account; `available` until it is claimed. */
export function boostStatus(ctx: V1Context): Answer {
  const boost = ctx.account.boost;
  return {
    status: 200,
    body: {
      available: boost === null,
      claimed_campaign_id: boost?.campaignId ?? null,
      expires_at: boost === null ? null : iso(boost.expiresAt),
    },
  };
}

/** POST /v1/boost `{ campaign_id }` — 409 when the account already claimed its boost. */
export function claimBoost(ctx: V1Context): Answer {
  const campaignId = readCampaignId(ctx.body);
  onlyFields(ctx.body, ['campaign_id']);
  const campaign = ctx.core.state.campaigns.get(campaignId);
  if (campaign === undefined || campaign.accountId !== ctx.account.id) throw notFound('campaign', campaignId);
  const account = ctx.account;
  if (account.boost !== null) {
    throw new HttpProblem(
      409,
      `the Launch Day Boost was already claimed for campaign ${account.boost.campaignId}`,
    );
  }
  account.boost = { campaignId, claimedAt: ctx.now, expiresAt: ctx.now + BOOST_DURATION_MS };
  return {
    status: 200,
    body: { campaign_id: campaignId, claimed: true, expires_at: iso(account.boost.expiresAt) },
  };
}

/** GET /v1/credits — balance and the most recent activity, newest first. */
export function credits(ctx: V1Context): Answer {
  const activity = ctx.account.creditActivity.slice(-CREDIT_ACTIVITY_LIMIT).reverse();
  return { status: 200, body: { balance_micros: ctx.account.creditMicros, activity } };
}

/** GET /v1/segments — labels with at least 100 pageviews over the last 7 days. */
export function segments(ctx: V1Context): Answer {
  return { status: 200, body: { segments: listedSegments(ctx.core.state, ctx.now) } };
}

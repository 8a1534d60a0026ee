/**
 * The service's side of `postback reconcile`: each account's campaigns (`GET /v1/campaigns`: status,
 * bid, budget, spend) and each campaign's filtered clicks (`GET /v1/refunds?campaign_id=`), read
 * tolerantly — a field the answer lacks is null, a field or value this version does not know is ignored —
 * and put beside the outbox's rows. Campaigns the service lists that the outbox never saw get a row too.
 */
import {
  type AdServiceClient,
  AdServiceError,
  type Campaign,
  isMicros,
  type RefundRecord,
  RequestValidationError,
} from '@postback/client';
import { UnreachableError } from '../args.ts';
import { newRow, type OutboxSide, rowKey, tokenKey } from './outbox-side.ts';
import type { FilteredClicks, ServiceFigures } from './types.ts';

/** A field of an answer when it is an integer of micros, else null. */
const microsOr = (value: unknown): number | null => (isMicros(value) ? value : null);
/** A field of an answer when it is a string, else null. */
const stringOr = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/**
 * A campaign's figures, by the field names the client reads (the spec does not show them): `status`,
 * `bid_micros`, `total_budget_micros`, `spend_micros`, `conversion_source`.
 */
export function serviceFigures(campaign: Campaign): ServiceFigures {
  const c = campaign as Record<string, unknown>;
  return {
    status: stringOr(c.status),
    bid_micros: microsOr(c.bid_micros),
    budget_micros: microsOr(c.total_budget_micros),
    spend_micros: microsOr(c.spend_micros),
    conversion_source: stringOr(c.conversion_source),
  };
}

/** The filtered clicks of a campaign, matched to our confirmations of `account` by click token. */
export function filteredClicks(
  records: readonly RefundRecord[],
  account: string | null,
  side: OutboxSide,
): FilteredClicks {
  const figures: FilteredClicks = { count: 0, amount_micros: 0, matched_orders: 0, matched_value_micros: 0 };
  for (const record of records) {
    figures.count += 1;
    figures.amount_micros += microsOr(record.amount_micros) ?? 0;
    const token = stringOr((record as Record<string, unknown>).click_token);
    const ours = token === null ? undefined : side.confirmsByToken.get(tokenKey(account, token));
    if (ours !== undefined) {
      figures.matched_orders += 1;
      figures.matched_value_micros += ours.valueMicros;
    }
  }
  return figures;
}

/** Why a call failed, in a few words; never the key (the client's errors are redacted). */
const why = (error: AdServiceError) =>
  error.status === null ? error.detail : `${error.status}: ${error.detail}`;

/**
 * A failure that means the service cannot be asked at all (no connection, a timeout, a 5xx): the whole
 * command fails with exit 3 rather than print half a comparison.
 */
function unreachable(error: unknown, what: string): never {
  if (error instanceof AdServiceError)
    throw new UnreachableError(`the ad service could not be read (${what}: ${why(error)})`, { cause: error });
  throw error;
}

/** Whether an error is the service's answer about this request (a 4xx), not a failure to reach it. */
const answered = (error: unknown): error is AdServiceError =>
  error instanceof RequestValidationError ||
  (error instanceof AdServiceError &&
    error.status !== null &&
    error.status >= 400 &&
    error.status < 500 &&
    error.status !== 408 &&
    error.status !== 429);

/**
 * Asks the service for the campaigns of every account of the rows (and of the default key), fills in
 * their figures, and returns what could not be read, as notes.
 *
 * @throws {UnreachableError} when the service cannot be reached (exit 3).
 */
export async function addServiceSide(
  side: OutboxSide,
  client: AdServiceClient,
  keyFor: (account: string | null) => string | undefined,
): Promise<string[]> {
  const notes: string[] = [];
  const accounts = new Set<string | null>([...side.rows.values()].map((row) => row.account));
  if (keyFor(null) !== undefined) accounts.add(null);
  const named = (account: string | null) => (account === null ? 'the default key' : `account ${account}`);
  for (const account of accounts) {
    const apiKey = keyFor(account);
    if (apiKey === undefined) {
      notes.push(`no key for ${named(account)}: its campaigns' service figures are not shown`);
      continue;
    }
    let campaigns: Campaign[];
    try {
      campaigns = (await client.campaigns.list({ apiKey })).campaigns;
    } catch (error) {
      if (!answered(error)) unreachable(error, 'GET /v1/campaigns');
      notes.push(
        `GET /v1/campaigns with ${account === null ? 'POSTBACK_API_KEY' : `the key of account ${account}`} was refused (${why(error)}): reconcile needs a key with the read scope`,
      );
      continue;
    }
    for (const campaign of campaigns) {
      const key = rowKey(account, campaign.id);
      const row = side.rows.get(key) ?? newRow(account, campaign.id);
      row.service = serviceFigures(campaign);
      side.rows.set(key, row);
    }
    for (const row of side.rows.values()) {
      if (row.account !== account) continue;
      if (row.service === null) {
        notes.push(`${row.campaign_id} (${named(account)}) is not in the service's campaign list`);
        continue;
      }
      try {
        const { refunds } = await client.refunds.list({ campaign_id: row.campaign_id }, { apiKey });
        row.filtered_clicks = filteredClicks(refunds, account, side);
      } catch (error) {
        if (!answered(error)) unreachable(error, `GET /v1/refunds?campaign_id=${row.campaign_id}`);
        notes.push(`GET /v1/refunds for ${row.campaign_id} was refused (${why(error)})`);
      }
    }
  }
  return notes;
}

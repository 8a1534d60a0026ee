/**
 * The body of a held decision (`POST api/held-send`, `POST api/held-drop`): `{ "account", "campaignId" }`,
 * the one held problem the operator was shown. Both fields are required (null names "no account" and "no
 * campaign named"), so a problem is never picked by a missing field. Read with the size limit of
 * `action-body.ts`; the store checks the values again (`OutboxSwitches.decide`).
 */
import { validateAccount } from '@postback/core/store';
import { readBody } from './action-body.ts';
import { ClientError } from './answers.ts';

/** The held problem a decision is for. */
export interface HeldProblemKey {
  /** The advertiser account, or null for the jobs without one. */
  account: string | null;
  /** The campaign (`cmp_…`) they are held for, or null when the service named none. */
  campaignId: string | null;
}

/** A campaign id as the service names them: `cmp_` then letters, digits, `_` or `-`. */
const CAMPAIGN_ID = /^cmp_[A-Za-z0-9_-]+$/;

const SHAPE = '{ "account": string|null, "campaignId": "cmp_…"|null }';

/**
 * The held problem a decision names, from its JSON body.
 *
 * @throws {ClientError} 400 naming the field for a body that is not `{ account, campaignId }`: not JSON,
 * another type, a missing or unknown field, a campaign not `cmp_…`.
 * @throws {JobValidationError} an account the store would refuse (empty, too long, ill-formed Unicode):
 * the handler answers it as a 400 naming the field.
 * @example
 * ```ts
 * await heldProblemOf(new Request(url, { method: 'POST', body: '{"account":"shop-a","campaignId":"cmp_1"}' }));
 * ```
 */
export async function heldProblemOf(request: Request): Promise<HeldProblemKey> {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(await readBody(request)));
  } catch (error) {
    if (error instanceof ClientError) throw error;
    throw new ClientError(400, `the body must be JSON: ${SHAPE}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ClientError(400, `name the held problem: ${SHAPE}`);
  const unknown = Object.keys(body).find((k) => k !== 'account' && k !== 'campaignId');
  if (unknown !== undefined)
    throw new ClientError(400, 'unknown field in the body: only "account" and "campaignId" are read');
  const { account, campaignId } = body as Record<string, unknown>;
  if (account !== null && typeof account !== 'string')
    throw new ClientError(400, 'account: must be a string (the account reference), or null');
  // The store's own rules (not empty, at most 200 characters, well-formed, no control character).
  if (typeof account === 'string') validateAccount(account);
  if (campaignId !== null && (typeof campaignId !== 'string' || !CAMPAIGN_ID.test(campaignId)))
    throw new ClientError(400, 'campaignId: must be a campaign id (cmp_…), or null');
  return { account, campaignId };
}

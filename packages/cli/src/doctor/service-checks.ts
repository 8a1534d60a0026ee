/**
 * The checks {@link doctor} makes against the service: the address, the key and its scopes, the clock,
 * and the campaigns' conversion source. Every request costs nothing: reads, one request without a key,
 * and the reversal of an order that does not exist in a campaign that does not exist (answered 404 for a
 * key that holds the `conversions` scope and 403 for one that does not; it cannot create, charge or
 * reverse anything).
 */
import { randomBytes } from 'node:crypto';
import { type AdServiceClient, AdServiceError, type Campaign } from '@postback/client';
import { endsInVersion } from '../base-url.ts';
import { duration, elapsed } from '../format.ts';
import { askMe, clockSkew, type MeAnswer, type TimedAnswer } from './answers.ts';
import { type DoctorCheck, fail, pass, skip } from './types.ts';

/** What a failure to get an answer says, in a few words. */
function why(error: unknown): string {
  if (error instanceof AdServiceError)
    return error.status === null ? error.detail : `${error.status}: ${error.detail}`;
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  const name = error instanceof Error ? error.name : 'Error';
  if (name === 'TimeoutError' || name === 'AbortError') return 'no answer in time';
  return typeof cause === 'string'
    ? `cannot connect (${cause})`
    : error instanceof Error
      ? error.message
      : String(error);
}

/** What to do about a base URL whose `/v1/me` is not the service's path. */
const WRONG_PATH_FIX =
  'give the part before /v1 (e.g. https://ads.example), and no proxy that rewrites paths';
const NOT_SERVICE_FIX =
  'point POSTBACK_API_URL / --base-url at the ad service itself, not a proxy, a login page or another service';

/** An answer's body in a few words. */
function bodyOf(answer: MeAnswer): string {
  if (answer.detail !== null) return `detail: ${answer.detail}`;
  return `${answer.contentType}, ${answer.object ? 'a JSON object' : 'no JSON detail'}`;
}

/**
 * `base-url`: the address is the service's, and its path the one before `/v1`. A base URL ending in
 * `/v1` fails at once (every path would be `/v1/v1/...`). A request without a key must get the service's
 * 401 with a JSON `detail` (a 404 is a wrong path; anything else a proxy, a page or another service).
 * As a router that authenticates first answers any path so, the path is then checked with the key
 * (when there is one): only the real `/v1/me` answers with a JSON object, or 401/403 with a JSON
 * `detail`; a 404 there is a wrong path.
 */
export async function checkBaseUrl(
  send: typeof globalThis.fetch,
  baseUrl: string,
  timeoutMs: number,
  apiKey?: string,
): Promise<DoctorCheck> {
  if (endsInVersion(baseUrl))
    return fail(
      'base-url',
      `${baseUrl} ends in /v1: every request would go to ${baseUrl}/v1/... and meet the service's 404`,
      'give the part before /v1 (e.g. https://ads.example): /v1 is added to every path',
    );
  let answer: MeAnswer;
  try {
    answer = await askMe(send, baseUrl, timeoutMs);
  } catch (error) {
    return fail(
      'base-url',
      `${baseUrl}: ${why(error)}`,
      'check the address (POSTBACK_API_URL / --base-url) and that this host can reach it',
    );
  }
  const asked = `GET ${baseUrl}/v1/me without a key`;
  const got = `${asked} answered ${answer.status} (${bodyOf(answer)})`;
  if (answer.status === 404) return fail('base-url', `${got}: a wrong path or a proxy`, WRONG_PATH_FIX);
  if (!(answer.status === 401 && answer.detail !== null))
    return fail(
      'base-url',
      `${got}: not the service's answer (it answers 401 with a JSON detail)`,
      NOT_SERVICE_FIX,
    );
  const keyless = `${asked} answered 401 with a JSON detail, as the service does`;
  if (apiKey === undefined) return pass('base-url', `${keyless}; the path is checked only with a key`);
  let keyed: MeAnswer;
  try {
    keyed = await askMe(send, baseUrl, timeoutMs, apiKey);
  } catch (error) {
    return fail('base-url', `GET ${baseUrl}/v1/me with the key: ${why(error)}`, 'try again');
  }
  const withKey = `GET ${baseUrl}/v1/me with the key answered ${keyed.status} (${bodyOf(keyed)})`;
  const served =
    (keyed.status >= 200 && keyed.status < 300 && keyed.object) ||
    ((keyed.status === 401 || keyed.status === 403) && keyed.detail !== null);
  if (served) return pass('base-url', `${keyless}; ${withKey}: the service's path`);
  if (keyed.status === 404)
    return fail(
      'base-url',
      `${withKey}: the service has no such path there (a wrong base path, or a proxy's router)`,
      WRONG_PATH_FIX,
    );
  return fail('base-url', `${withKey}: not the service's answer`, NOT_SERVICE_FIX);
}

/** What the key check learnt: whether the key may read (so the campaign list can be checked). */
export interface KeyFindings {
  check: DoctorCheck;
  canRead: boolean;
}

/** The scopes `GET /v1/me` reports, when it reports them (the spec does not show its fields). */
function reportedScopes(me: unknown): string[] | null {
  const scopes = (me as { scopes?: unknown } | null)?.scopes;
  return Array.isArray(scopes) && scopes.every((s) => typeof s === 'string') ? scopes : null;
}

/**
 * `key`: accepted, and holds `conversions`. `GET /v1/me` tells whether the key may read (and its scopes,
 * when the answer lists them); the `conversions` scope is decided by the service's answer to a
 * conversions request that cannot apply anything: the reversal of a random order in a random campaign.
 */
export async function checkKey(client: AdServiceClient | null): Promise<KeyFindings> {
  if (client === null)
    return {
      check: fail(
        'key',
        'POSTBACK_API_KEY is not set',
        'set POSTBACK_API_KEY to a key with the conversions scope',
      ),
      canRead: false,
    };
  const refused = (status: number, detail: string): KeyFindings => ({
    check: fail(
      'key',
      `the service refused the key (${status}: ${detail})`,
      'copy the key again from the dashboard (settings, API keys: it is shown once), without spaces or line ends',
    ),
    canRead: false,
  });
  let canRead = false;
  let scopes: string[] | null = null;
  try {
    scopes = reportedScopes(await client.me.get());
    canRead = true;
  } catch (error) {
    if (error instanceof AdServiceError && error.status === 401) return refused(401, error.detail);
    if (!(error instanceof AdServiceError && error.status === 403)) {
      return {
        check: fail('key', `GET /v1/me: ${why(error)}`, 'see the base-url check; try again'),
        canRead: false,
      };
    }
  }
  const suffix = randomBytes(6).toString('hex');
  const probe = { campaign_id: `cmp_postback_doctor_${suffix}`, order_id: `postback-doctor-probe-${suffix}` };
  let conversions: string;
  try {
    await client.conversions.refund(probe);
    conversions = 'the probe reversal was answered 2xx';
  } catch (error) {
    if (!(error instanceof AdServiceError) || error.status === null)
      return { check: fail('key', `the conversions probe: ${why(error)}`, 'try again'), canRead };
    if (error.status === 401) return refused(401, error.detail);
    if (error.status === 403)
      return {
        check: fail(
          'key',
          `the key lacks the conversions scope: a reversal was refused with 403 (${error.detail})`,
          'create a key with the conversions scope (settings, API keys) and set POSTBACK_API_KEY to it',
        ),
        canRead,
      };
    if (!error.detailFromService)
      return {
        check: fail(
          'key',
          `the conversions probe got ${error.status} without the service's JSON detail`,
          'see the base-url check',
        ),
        canRead,
      };
    conversions = `a reversal of a made-up order was answered ${error.status}, not 403`;
  }
  const extra = scopes === null ? (canRead ? ['read'] : []) : scopes.filter((s) => s !== 'conversions');
  const known = scopes === null ? '' : `; scopes reported: ${scopes.join(', ') || 'none'}`;
  const note =
    extra.length === 0
      ? ''
      : `; note: extra scope(s) ${extra.join(', ')} (a worker needs only conversions; read lets doctor check the campaign list)`;
  return {
    check: pass('key', `accepted, with the conversions scope (${conversions})${known}${note}`),
    canRead,
  };
}

/** `clock`: this host's clock agrees with the service's `Date` within the safety margin. */
export function checkClock(answers: readonly TimedAnswer[], safetyMarginMs: number): DoctorCheck {
  const skew = clockSkew(answers);
  if (skew === null)
    return skip('clock', 'not checked: no answer carried a Date header (a proxy may remove it)');
  const { skewMs, uncertaintyMs } = skew;
  const side = skewMs >= 0 ? 'ahead of' : 'behind';
  const found = `the service's clock is ${duration(skewMs)} ${side} this host's (±${elapsed(uncertaintyMs)}); the safety margin is ${duration(safetyMarginMs)}`;
  if (Math.abs(skewMs) - uncertaintyMs <= safetyMarginMs) return pass('clock', found);
  return fail(
    'clock',
    found,
    skewMs > 0
      ? "set this host's clock right (NTP: chrony or systemd-timesyncd): running behind, it sends confirmations the service refuses as late"
      : "set this host's clock right (NTP: chrony or systemd-timesyncd): deadlines are counted on it",
  );
}

/** A campaign's conversion source as the list shows it: `s2s`, another value, or unknown (absent). */
export function sourceOf(campaign: Campaign): string | null {
  const source = (campaign as { conversion_source?: unknown }).conversion_source;
  return typeof source === 'string' ? source : null;
}

/**
 * `campaigns`: with a `read` key, no campaign of `GET /v1/campaigns` is on pixel billing. `canRead`: what
 * the key check learnt (null: not checked, so the list is asked and a 403 skips).
 */
export async function checkCampaigns(
  client: AdServiceClient | null,
  canRead: boolean | null,
): Promise<{ check: DoctorCheck; sources: Map<string, string | null> }> {
  const sources = new Map<string, string | null>();
  const noRead = {
    check: skip(
      'campaigns',
      'not checked: the key has no read scope (a worker needs none)',
      'run doctor with a key that also has read to check the campaign list',
    ),
    sources,
  };
  if (client === null) return { check: skip('campaigns', 'not checked: no key'), sources };
  if (canRead === false) return noRead;
  let campaigns: Campaign[];
  try {
    campaigns = (await client.campaigns.list()).campaigns;
  } catch (error) {
    if (error instanceof AdServiceError && error.status === 403) return noRead;
    return { check: fail('campaigns', `GET /v1/campaigns: ${why(error)}`, 'try again'), sources };
  }
  for (const campaign of campaigns) sources.set(campaign.id, sourceOf(campaign));
  const pixel = campaigns.filter((c) => sourceOf(c) !== null && sourceOf(c) !== 's2s');
  const unknown = campaigns.filter((c) => sourceOf(c) === null).length;
  const s2s = campaigns.length - pixel.length - unknown;
  const counts = `${campaigns.length} campaign(s): ${s2s} on s2s${unknown > 0 ? `, ${unknown} of unknown source (the list does not show it)` : ''}`;
  if (pixel.length > 0) {
    const named = pixel.map((c) => `${c.id} (${sourceOf(c)})`).join(', ');
    return {
      check: fail(
        'campaigns',
        `${pixel.length} campaign(s) not on s2s, billed by the pixel: ${named}; ${counts}`,
        'switch each to s2s in the dashboard (campaign settings, conversion source): the s2s endpoints refuse its conversions',
      ),
      sources,
    };
  }
  if (campaigns.length > 0 && unknown === campaigns.length)
    return { check: skip('campaigns', `unknown: ${counts}`), sources };
  return { check: pass('campaigns', counts), sources };
}

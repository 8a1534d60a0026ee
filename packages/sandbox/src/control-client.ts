/**
 * A small typed client of the control API (`/_sandbox/`), for tests and demos: the same requests a
 * user would make with curl, with the answers typed. It speaks real HTTP via `fetch`. Its types are the
 * sandbox's own: nothing here comes from `@postback/client`.
 */
import type { FaultConfig } from './faults.ts';
import type { SandboxVariant } from './variants.ts';

/**
 * The keys of a sandbox account, one per scope and one with every scope. Secrets: do not log them.
 * @example
 * ```ts
 * createClient({ baseUrl, apiKey: keys.conversions });
 * ```
 */
export interface SandboxKeys {
  read: string;
  write: string;
  conversions: string;
  all: string;
}

export interface SandboxAccount {
  account_id: string;
  keys: SandboxKeys;
}

export interface SandboxClick {
  click_token: string;
  clicked_at: string;
  landing_url: string;
}

/**
 * One order the sandbox applied, as `GET /_sandbox/conversions` reports it: the oracle of what the
 * service did, independent of what any client believes.
 * @example
 * ```ts
 * const c = await control.conversion('ord-1');
 * c?.state; // 'confirmed' | 'reversed'; undefined when never applied
 * ```
 */
export interface SandboxConversion {
  account_id: string;
  order_id: string;
  campaign_id: string;
  value_micros: number;
  /** What the confirmation charged the campaign (0 for models not priced per conversion); given back by a reversal. */
  charged_micros: number;
  state: 'confirmed' | 'reversed';
  clicked_at: string;
  confirmed_at: string;
  reversed_at: string | null;
}

export interface SandboxConversionReport {
  conversions: SandboxConversion[];
  counts: { requests: number; duplicates: number; rejections: number; late: number };
}

/**
 * A campaign as the control API answers it (the sandbox's own shape, the same as its `/v1/campaigns`
 * records); only the fields tests usually read are typed, the rest are kept.
 * @example
 * ```ts
 * const campaign = await control.setConversionSource('cmp_abc', 'pixel');
 * campaign.conversion_source; // 'pixel'
 * ```
 */
export interface SandboxCampaign {
  id: string;
  status: string;
  pricing_model: string;
  conversion_source: 's2s' | 'pixel';
  bid_micros: number;
  spend_micros: number;
  [field: string]: unknown;
}

/**
 * A fault configuration to set (`POST /_sandbox/faults`); omitted settings are off. See the README's
 * "Faults" for each, and {@link FaultConfig} for what each setting does.
 * @example
 * ```ts
 * await control.setFaults({ rate_limit_per_s: 5 }); // 5 requests per second per key, then 429
 * ```
 */
export type SandboxFaults = { [K in keyof FaultConfig]?: NonNullable<FaultConfig[K]> };

/** The fault configuration in effect, every setting filled in (`null`: off). */
export type SandboxFaultConfig = FaultConfig;

/** A key of a sandbox account, named by its scope (`all`: every scope); the key itself is a secret. */
export type SandboxKeyName = 'read' | 'write' | 'conversions' | 'all';

/** One request outside `/_sandbox/` as the request log keeps it. */
export interface SandboxRequestRecord {
  /** Arrival on the sandbox clock (ISO-8601). */
  at: string;
  /** The key's account and name; `null` for a missing or unknown key. */
  account_id: string | null;
  key: SandboxKeyName | null;
  method: string;
  /** Without the query string. */
  path: string;
  /** The status answered; `null` when the connection was closed instead (a reset fault). */
  status: number | null;
}

/** What one key's requests got, counted since the start (or the last `clearRequests`), never dropped. */
export interface SandboxKeyReport {
  account_id: string;
  key: SandboxKeyName;
  requests: number;
  /** Answered 429 by the rate-limit fault (`rate_limit_per_s`). */
  rate_limited: number;
  /** Answers by status (`"200"`, `"429"`, ...; `"reset"` for connections closed without one). */
  statuses: Record<string, number>;
}

/**
 * `GET /_sandbox/requests`: the logged requests (oldest first, the last `requestLogSize`), the per-key
 * counters, and how many records the log dropped.
 * @example
 * ```ts
 * const { keys } = await control.requests({ accountId, key: 'conversions' });
 * keys[0]?.statuses['429']; // how many 429s that key got
 * ```
 */
export interface SandboxRequestReport {
  requests: SandboxRequestRecord[];
  keys: SandboxKeyReport[];
  dropped: number;
}

/** Which requests {@link SandboxControl.requests} reports; every given field must match. */
export interface SandboxRequestFilter {
  accountId?: string;
  key?: SandboxKeyName;
  /** A status, or `'reset'` for requests answered by closing the connection. */
  status?: number | 'reset';
}

/**
 * A non-2xx answer of the control API.
 * @example
 * ```ts
 * await control.click('cmp_missing').catch((e: SandboxControlError) => e.status); // 404
 * ```
 */
export class SandboxControlError extends Error {
  override name = 'SandboxControlError';
  readonly status: number;
  readonly detail: string;
  constructor(status: number, detail: string) {
    super(`sandbox control API answered ${status}: ${detail}`);
    this.status = status;
    this.detail = detail;
  }
}

/**
 * Methods of the control API; see the README for each route.
 * @example
 * ```ts
 * const { now } = await sandbox.control.advanceClock(86_400);
 * ```
 */
export interface SandboxControl {
  createAccount(body?: { balance_micros?: number; credit_micros?: number }): Promise<SandboxAccount>;
  account(
    accountId: string,
  ): Promise<{ account_id: string; balance_micros: number; held_micros: number; credit_micros: number }>;
  /**
   * Revokes every key of an account: each `/v1` request with one answers 401 (`{ detail }`) until
   * {@link SandboxControl.restoreKeys}.
   */
  revokeKeys(accountId: string): Promise<{ account_id: string; revoked: boolean }>;
  /** Makes the revoked keys of an account work again (the same keys). */
  restoreKeys(accountId: string): Promise<{ account_id: string; revoked: boolean }>;
  click(campaignId: string): Promise<SandboxClick>;
  advanceClock(seconds: number): Promise<{ now: string }>;
  clock(): Promise<{ now: string }>;
  /** Every applied order (of one account when `accountId` is given), with counters. */
  conversions(accountId?: string): Promise<SandboxConversionReport>;
  /** One applied order by `order_id` (of one account when given); `undefined` when none was applied. */
  conversion(orderId: string, accountId?: string): Promise<SandboxConversion | undefined>;
  /** The response variants in effect and every known one. */
  variants(): Promise<{ variants: SandboxVariant[]; available: SandboxVariant[] }>;
  /** Replaces the response variants in effect (an empty list: the default answers). */
  setVariants(
    variants: readonly SandboxVariant[],
  ): Promise<{ variants: SandboxVariant[]; available: SandboxVariant[] }>;
  /** Turns every response variant off. */
  clearVariants(): Promise<{ variants: SandboxVariant[]; available: SandboxVariant[] }>;
  /** Replaces the fault configuration (omitted settings are off); resolves to the one in effect. */
  setFaults(faults: SandboxFaults): Promise<SandboxFaultConfig>;
  /** The fault configuration in effect. */
  faults(): Promise<SandboxFaultConfig>;
  /** Turns every fault off. */
  clearFaults(): Promise<SandboxFaultConfig>;
  /**
   * The request log and per-key counters (`GET /_sandbox/requests`), filtered by account, key name and
   * status: e.g. the 429s a key got, or the times of its requests after a `Retry-After`.
   */
  requests(filter?: SandboxRequestFilter): Promise<SandboxRequestReport>;
  /** Empties the request log and zeroes every key's counters (`DELETE /_sandbox/requests`). */
  clearRequests(): Promise<SandboxRequestReport>;
  reset(): Promise<unknown>;
  recordPageviews(
    label: string,
    count?: number,
  ): Promise<{ label: string; recorded: number; at: string; listed: boolean }>;
  recordPlacementRequest(placementId: string): Promise<{ placement_id: string; last_request_at: string }>;
  recordDomainProof(domain: string, method: 'dns_txt' | 'file' | 'meta_tag', token: string): Promise<unknown>;
  recordRefund(
    campaignId: string,
    reason: string,
    amountMicros?: number,
  ): Promise<{ id: string; campaign_id: string; reason: string; amount_micros: number; created_at: string }>;
  /** Sets a campaign's status (`review`, `active`, `paused`, `rejected`, `completed`). */
  setCampaignStatus(campaignId: string, status: string): Promise<SandboxCampaign>;
  /**
   * Switches a campaign's conversion source: on `pixel`, s2s confirmations and reversals of the campaign
   * answer 422 (`campaign cmp_… is not on s2s: …`); back on `s2s`, they are accepted again.
   */
  setConversionSource(campaignId: string, source: 's2s' | 'pixel'): Promise<SandboxCampaign>;
  firePixel(body: {
    click_token: string;
    order_id: string;
  }): Promise<{ campaign_id: string; order_id: string; billed: boolean; charged_micros: number }>;
}

/**
 * Creates a control-API client for a sandbox at `baseUrl`.
 *
 * @example
 * ```ts
 * const control = createSandboxControl('http://127.0.0.1:4010');
 * const { keys } = await control.createAccount({ balance_micros: 50_000_000 });
 * ```
 */
export function createSandboxControl(baseUrl: string, fetchImpl: typeof fetch = fetch): SandboxControl {
  const base = baseUrl.replace(/\/+$/, '');
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetchImpl(`${base}/_sandbox/${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as T & { detail?: string };
    if (!res.ok) throw new SandboxControlError(res.status, json.detail ?? `HTTP ${res.status}`);
    return json;
  }
  return {
    createAccount: (body = {}) => call('POST', 'accounts', body),
    account: (id) => call('GET', `accounts/${encodeURIComponent(id)}`),
    revokeKeys: (id) => call('POST', `accounts/${encodeURIComponent(id)}/keys`, { revoked: true }),
    restoreKeys: (id) => call('POST', `accounts/${encodeURIComponent(id)}/keys`, { revoked: false }),
    click: (campaignId) => call('POST', 'clicks', { campaign_id: campaignId }),
    advanceClock: (seconds) => call('POST', 'clock', { advance_seconds: seconds }),
    clock: () => call('GET', 'clock'),
    conversions: (accountId) =>
      call(
        'GET',
        accountId === undefined ? 'conversions' : `conversions?account_id=${encodeURIComponent(accountId)}`,
      ),
    conversion: async (orderId, accountId) => {
      const query = new URLSearchParams({ order_id: orderId });
      if (accountId !== undefined) query.set('account_id', accountId);
      const report = await call<SandboxConversionReport>('GET', `conversions?${query}`);
      return report.conversions[0];
    },
    variants: () => call('GET', 'variants'),
    setVariants: (variants) => call('POST', 'variants', { variants }),
    clearVariants: () => call('DELETE', 'variants'),
    setFaults: (faults) => call('POST', 'faults', faults),
    faults: () => call('GET', 'faults'),
    clearFaults: () => call('DELETE', 'faults'),
    requests: (filter = {}) => {
      const query = new URLSearchParams();
      if (filter.accountId !== undefined) query.set('account_id', filter.accountId);
      if (filter.key !== undefined) query.set('key', filter.key);
      if (filter.status !== undefined) query.set('status', String(filter.status));
      const search = query.size === 0 ? '' : `?${query}`;
      return call('GET', `requests${search}`);
    },
    clearRequests: () => call('DELETE', 'requests'),
    reset: () => call('POST', 'reset', {}),
    recordPageviews: (label, count = 1) => call('POST', 'pageviews', { label, count }),
    recordPlacementRequest: (placementId) =>
      call('POST', 'placement-requests', { placement_id: placementId }),
    recordDomainProof: (domain, method, token) => call('POST', 'domain-proofs', { domain, method, token }),
    recordRefund: (campaignId, reason, amountMicros) =>
      call('POST', 'refunds', { campaign_id: campaignId, reason, amount_micros: amountMicros }),
    setCampaignStatus: (campaignId, status) =>
      call('POST', `campaigns/${encodeURIComponent(campaignId)}/status`, { status }),
    setConversionSource: (campaignId, source) =>
      call('POST', `campaigns/${encodeURIComponent(campaignId)}/conversion-source`, {
        conversion_source: source,
      }),
    firePixel: (body) => call('POST', 'pixel', body),
  };
}

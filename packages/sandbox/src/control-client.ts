/**
 * A small typed client of the control API (`/_sandbox/`), for tests and demos: the same requests a
 * user would make with curl, with the answers typed. It speaks real HTTP via `fetch`. Its types are the
 * sandbox's own: nothing here comes from `@postback/client`.
 */
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

export interface SandboxFaults {
  error_rate?: number;
  error_status?: number;
  reset_rate?: number;
  reset_after_rate?: number;
  latency_ms?: number;
  retry_after_s?: number;
  fail_next?: number;
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
  setFaults(faults: SandboxFaults): Promise<Required<SandboxFaults>>;
  clearFaults(): Promise<unknown>;
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
    clearFaults: () => call('DELETE', 'faults'),
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

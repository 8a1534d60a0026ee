/**
 * A sandbox of the ad service prepared for delivery tests: one account with its keys, one s2s campaign
 * billed per conversion, and helpers over the control API (clicks, faults, clock, conversions). Used by
 * the crash, chaos and expiry suites and by the delivery benchmarks.
 */
import { type SandboxOptions, startSandbox } from '@postback/sandbox';

/** What `GET /_sandbox/conversions` returns. */
export interface SandboxConversions {
  conversions: Array<{
    order_id: string;
    campaign_id: string;
    value_micros: number;
    state: 'confirmed' | 'reversed';
    clicked_at: string;
    confirmed_at: string;
    reversed_at: string | null;
  }>;
  counts: { requests: number; duplicates: number; rejections: number; late: number };
}

/** Fault settings of `POST /_sandbox/faults` (all optional; unknown keys are refused by the sandbox). */
export interface Faults {
  error_rate?: number;
  error_status?: number;
  reset_rate?: number;
  reset_after_rate?: number;
  latency_ms?: number;
  retry_after_s?: number;
  fail_next?: number;
}

/** A running sandbox with one account and one s2s campaign. */
export interface SandboxWorld {
  url: string;
  accountId: string;
  /** Key with only the `conversions` scope: what a worker uses. */
  conversionsKey: string;
  campaignId: string;
  /** Price of one conversion (the campaign's bid): what one charge costs. */
  bidMicros: number;
  /** Simulates `n` ad clicks on the campaign (now, on the sandbox clock). */
  clicks(n: number): Promise<Array<{ token: string; clickedAt: number }>>;
  conversions(): Promise<SandboxConversions>;
  /** Creates another s2s campaign of the account (same bid) whose creative lands on `landingUrl`; returns its id. */
  createCampaign(landingUrl: string): Promise<string>;
  /** One ad click on `campaignId`, with the creative's landing URL carrying the token. */
  click(campaignId: string): Promise<{ token: string; clickedAt: number; landingUrl: string }>;
  /** The campaign's spend as the service's campaign list reports it. */
  spendMicros(): Promise<number>;
  setFaults(faults: Faults): Promise<void>;
  clearFaults(): Promise<void>;
  /** Moves the sandbox clock forward; returns the new sandbox time. */
  advanceClock(seconds: number): Promise<number>;
  /** Current sandbox time (epoch ms). */
  now(): Promise<number>;
  close(): Promise<void>;
}

/** The s2s CPA campaign a world uses, landing on `landingUrl`. */
const campaignBody = (landingUrl: string, bidMicros: number) => ({
  name: 'postback test',
  pricing_model: 'cpa',
  conversion_source: 's2s',
  bid_micros: bidMicros,
  total_budget_micros: 500_000_000,
  daily_cap_micros: 500_000_000,
  target_categories: [],
  target_segments: [],
  exclude_segments: [],
  creatives: [{ headline: 'h', body: 'b', cta: 'Buy', landing_url: landingUrl, format: 'card' }],
});

async function call<T>(url: string, method: string, path: string, body?: unknown, key?: string): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  const init = { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) };
  let res: Response;
  try {
    res = await fetch(new URL(path, url), init);
  } catch {
    // A kept-alive connection the server closed while idle: one fresh attempt (control calls are cheap and
    // a lost click or a repeated fault setting changes nothing the tests count).
    res = await fetch(new URL(path, url), init);
  }
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/**
 * Starts a sandbox on an ephemeral port and prepares an account and an s2s campaign.
 *
 * @example
 * ```ts
 * const world = await startSandboxWorld();
 * const [click] = await world.clicks(1);
 * await world.close();
 * ```
 */
export async function startSandboxWorld(
  options: { bidMicros?: number; sandbox?: Omit<SandboxOptions, 'port'> } = {},
): Promise<SandboxWorld> {
  const sandbox = await startSandbox({ ...options.sandbox, port: 0 });
  return prepareSandboxWorld(sandbox.url, () => sandbox.close(), options);
}

/**
 * Prepares an account and an s2s campaign on a sandbox that is already running at `url` (in this process
 * or another); `close` stops that sandbox and is called if the preparation fails.
 *
 * @example
 * ```ts
 * const world = await prepareSandboxWorld(child.url, () => child.stop());
 * ```
 */
export async function prepareSandboxWorld(
  url: string,
  close: () => Promise<void>,
  options: { bidMicros?: number } = {},
): Promise<SandboxWorld> {
  const bidMicros = options.bidMicros ?? 1_000;
  try {
    const account = await call<{
      account_id: string;
      keys: { write: string; conversions: string; read: string };
    }>(url, 'POST', '/_sandbox/accounts', {});
    const campaign = await call<{ id: string }>(
      url,
      'POST',
      '/v1/campaigns',
      campaignBody('https://shop.example/landing', bidMicros),
      account.keys.write,
    );
    return {
      url,
      accountId: account.account_id,
      conversionsKey: account.keys.conversions,
      campaignId: campaign.id,
      bidMicros,
      async clicks(n) {
        const out: Array<{ token: string; clickedAt: number }> = [];
        // Sequential in small parallel groups: the control API has no bulk call, and loopback is fast.
        for (let i = 0; i < n; i += 50) {
          const group = await Promise.all(
            Array.from({ length: Math.min(50, n - i) }, () =>
              call<{ click_token: string; clicked_at: string }>(url, 'POST', '/_sandbox/clicks', {
                campaign_id: campaign.id,
              }),
            ),
          );
          for (const c of group) out.push({ token: c.click_token, clickedAt: Date.parse(c.clicked_at) });
        }
        return out;
      },
      async createCampaign(landingUrl) {
        const created = await call<{ id: string }>(
          url,
          'POST',
          '/v1/campaigns',
          campaignBody(landingUrl, bidMicros),
          account.keys.write,
        );
        return created.id;
      },
      async click(campaignId) {
        const c = await call<{ click_token: string; clicked_at: string; landing_url: string }>(
          url,
          'POST',
          '/_sandbox/clicks',
          { campaign_id: campaignId },
        );
        return { token: c.click_token, clickedAt: Date.parse(c.clicked_at), landingUrl: c.landing_url };
      },
      conversions: () =>
        call<SandboxConversions>(url, 'GET', `/_sandbox/conversions?account_id=${account.account_id}`),
      async spendMicros() {
        const list = await call<{ campaigns: Array<{ id: string; spend_micros: number }> }>(
          url,
          'GET',
          '/v1/campaigns',
          undefined,
          account.keys.read,
        );
        return list.campaigns.find((c) => c.id === campaign.id)?.spend_micros ?? Number.NaN;
      },
      async setFaults(faults) {
        await call(url, 'POST', '/_sandbox/faults', faults);
      },
      async clearFaults() {
        await call(url, 'DELETE', '/_sandbox/faults');
      },
      async advanceClock(seconds) {
        return Date.parse(
          (await call<{ now: string }>(url, 'POST', '/_sandbox/clock', { advance_seconds: seconds })).now,
        );
      },
      async now() {
        return Date.parse((await call<{ now: string }>(url, 'GET', '/_sandbox/clock')).now);
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

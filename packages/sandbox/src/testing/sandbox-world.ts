/**
 * A sandbox of the ad service prepared for delivery tests and benchmarks: one account with its keys,
 * one s2s campaign billed per conversion, and helpers over the control API (clicks, faults, clock,
 * conversions). It speaks to the sandbox over HTTP only — the control API through
 * `createSandboxControl`, two `/v1/campaigns` calls with plain `fetch` — so the sandbox it prepares may
 * run in this process or in another one.
 */
import type { SandboxConversionReport, SandboxFaults } from '../control-client.ts';
import { createSandboxControl } from '../control-client.ts';
import type { SandboxOptions } from '../options.ts';
import { startSandbox } from '../server.ts';

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
  /** What the sandbox applied for this world's account: the oracle of what was charged. */
  conversions(): Promise<SandboxConversionReport>;
  /** Creates another s2s campaign of the account (same bid) whose creative lands on `landingUrl`; returns its id. */
  createCampaign(landingUrl: string): Promise<string>;
  /** One ad click on `campaignId`, with the creative's landing URL carrying the token. */
  click(campaignId: string): Promise<{ token: string; clickedAt: number; landingUrl: string }>;
  /** The campaign's spend as the service's campaign list reports it. */
  spendMicros(): Promise<number>;
  setFaults(faults: SandboxFaults): Promise<void>;
  clearFaults(): Promise<void>;
  /** Moves the sandbox clock forward; returns the new sandbox time. */
  advanceClock(seconds: number): Promise<number>;
  /** Current sandbox time (epoch ms). */
  now(): Promise<number>;
  close(): Promise<void>;
}

/** Options of {@link startSandboxWorld}. */
export interface SandboxWorldOptions {
  /**
   * The campaign's bid: what one conversion charges.
   * @defaultValue 1_000
   */
  bidMicros?: number;
  /** Options of the sandbox itself (its port is always an ephemeral one). */
  sandbox?: Omit<SandboxOptions, 'port'>;
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

/**
 * `fetch` with one fresh attempt after a network error: a kept-alive connection the server closed while
 * idle. Control calls are cheap, and a lost click or a repeated fault setting changes nothing tests count.
 */
const fetchOnceMore: typeof fetch = async (input, init) => {
  try {
    return await fetch(input, init);
  } catch {
    return fetch(input, init);
  }
};

/** One `/v1` call with an account key; the answer's JSON, or an error naming the call and its answer. */
async function v1<T>(url: string, method: string, path: string, key: string, body?: unknown): Promise<T> {
  const res = await fetchOnceMore(new URL(path, url), {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** A click as the world reports it: the token and its time in epoch milliseconds. */
function clickOf(c: { click_token: string; clicked_at: string; landing_url: string }) {
  return { token: c.click_token, clickedAt: Date.parse(c.clicked_at), landingUrl: c.landing_url };
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
export async function startSandboxWorld(options: SandboxWorldOptions = {}): Promise<SandboxWorld> {
  const sandbox = await startSandbox({ ...options.sandbox, port: 0 });
  return prepareSandboxWorld(
    sandbox.url,
    () => sandbox.close(),
    options.bidMicros === undefined ? {} : { bidMicros: options.bidMicros },
  );
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
  const control = createSandboxControl(url, fetchOnceMore);
  try {
    const account = await control.createAccount();
    const campaign = await v1<{ id: string }>(
      url,
      'POST',
      '/v1/campaigns',
      account.keys.write,
      campaignBody('https://shop.example/landing', bidMicros),
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
            Array.from({ length: Math.min(50, n - i) }, () => control.click(campaign.id)),
          );
          for (const c of group) out.push({ token: c.click_token, clickedAt: Date.parse(c.clicked_at) });
        }
        return out;
      },
      async createCampaign(landingUrl) {
        const body = campaignBody(landingUrl, bidMicros);
        return (await v1<{ id: string }>(url, 'POST', '/v1/campaigns', account.keys.write, body)).id;
      },
      click: async (campaignId) => clickOf(await control.click(campaignId)),
      conversions: () => control.conversions(account.account_id),
      async spendMicros() {
        const list = await v1<{ campaigns: Array<{ id: string; spend_micros: number }> }>(
          url,
          'GET',
          '/v1/campaigns',
          account.keys.read,
        );
        return list.campaigns.find((c) => c.id === campaign.id)?.spend_micros ?? Number.NaN;
      },
      async setFaults(faults) {
        await control.setFaults(faults);
      },
      async clearFaults() {
        await control.clearFaults();
      },
      advanceClock: async (seconds) => Date.parse((await control.advanceClock(seconds)).now),
      now: async () => Date.parse((await control.clock()).now),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

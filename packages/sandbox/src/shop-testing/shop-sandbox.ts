/**
 * A sandbox for a shop's own integration tests: started in-process with one account and one s2s
 * campaign, it lands ad clicks on the shop's app over HTTP, and asserts what the ad service applied
 * ("this order was confirmed once with this value", "this return was reversed") from its own records,
 * never from the shop's. Its clock is the shop's clock too (`now`), so `advanceDays` moves both past the
 * 7-day window or the return window in an instant. Framework-agnostic: plain HTTP and thrown
 * `AssertionError`s, for vitest, jest or node:test alike.
 */
import type { SandboxControl, SandboxConversionReport } from '../control-client.ts';
import { DEFAULT_CLICK_PARAM, DEFAULT_RETURN_WINDOW_DAYS, SandboxOptionsError } from '../options.ts';
import { startSandbox } from '../server.ts';
import { DAY_MS } from '../traffic.ts';
import { type ShopExpectations, shopExpectations } from './expectations.ts';
import { createShopper, type Shopper } from './shopper.ts';

/**
 * How long `expectConversion` and `expectReversal` wait for the shop to deliver, when not told.
 * @defaultValue 5_000
 * @example
 * ```ts
 * await startShopSandbox({ timeoutMs: DEFAULT_EXPECT_TIMEOUT_MS * 2 }); // a slow CI machine
 * ```
 */
export const DEFAULT_EXPECT_TIMEOUT_MS = 5_000;

/**
 * How long `expectNoConversion` watches for a conversion that must not come, when not told.
 * @defaultValue 1_000
 * @example
 * ```ts
 * await sandbox.expectNoConversion({ orderId: 'o-1', withinMs: DEFAULT_NO_CONVERSION_WAIT_MS });
 * ```
 */
export const DEFAULT_NO_CONVERSION_WAIT_MS = 1_000;

/**
 * The bid of the shop sandbox's campaign: what one conversion charges.
 * @defaultValue 1_000_000
 * @example
 * ```ts
 * await startShopSandbox({ bidMicros: DEFAULT_SHOP_BID_MICROS });
 * ```
 */
export const DEFAULT_SHOP_BID_MICROS = 1_000_000;

/**
 * Options of {@link startShopSandbox}.
 * @example
 * ```ts
 * const options: ShopSandboxOptions = { clickParam: 'clid', returnWindowDays: 60 };
 * ```
 */
export interface ShopSandboxOptions {
  /** The click-token query parameter of landing URLs (the shop's setting). @defaultValue `'click_token'` */
  clickParam?: string;
  /** Days after a confirmation a reversal is accepted. @defaultValue 30 */
  returnWindowDays?: number;
  /** The campaign's bid, charged per conversion. @defaultValue {@link DEFAULT_SHOP_BID_MICROS} */
  bidMicros?: number;
  /** How long the `expect…` helpers wait for delivery. @defaultValue {@link DEFAULT_EXPECT_TIMEOUT_MS} */
  timeoutMs?: number;
}

/** A visitor who arrived through an ad click: a {@link Shopper} with the click it came from. */
export interface ClickedShopper extends Shopper {
  /** The click token the landing URL carried. */
  readonly clickToken: string;
  /** When the ad was clicked, epoch ms on the sandbox clock. */
  readonly clickedAt: number;
  /** The URL landed on: the app's URL and path with the click token added. */
  readonly landingUrl: string;
  /** The shop's answer to the landing (after its redirects), its body read. */
  readonly landing: { status: number; headers: Headers; text: string };
}

/**
 * A running shop sandbox.
 * @example
 * ```ts
 * await using sandbox = await startShopSandbox();
 * ```
 */
export interface ShopSandbox extends ShopExpectations {
  /** The ad service's base URL: the shop's `POSTBACK_API_URL`. */
  readonly url: string;
  /** A key with the `conversions` scope: the shop's API key. */
  readonly apiKey: string;
  readonly accountId: string;
  /** The campaign every click belongs to (s2s, billed `bidMicros` per conversion). */
  readonly campaignId: string;
  /** The click-token query parameter. */
  readonly clickParam: string;
  /**
   * The sandbox clock (epoch ms): give it to the shop's capture, outbox and Dispatcher as their `now`,
   * so {@link ShopSandbox.advanceDays} moves them with the ad service.
   */
  readonly now: () => number;
  /** The control API, for anything else (faults, variants, the request log). */
  readonly control: SandboxControl;
  /** Moves the clock (the sandbox's and the shop's `now`) forward by `days`; returns the new time. */
  advanceDays(days: number): number;
  /**
   * An ad click on the campaign, then a visit of `path` (default `/`) on the app with the click token
   * added, as the ad's landing URL would be; cookies the shop sets are kept for the shopper's next
   * requests. Throws when the landing answers an error status.
   */
  landWithClick(appUrl: string, path?: string): Promise<ClickedShopper>;
  /** Everything the ad service applied for the shop, with its counters (`late`: requests after 7 days). */
  conversions(): Promise<SandboxConversionReport>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

type Check = (v: unknown) => string | null;
const integerUpTo =
  (max: number): Check =>
  (v) =>
    typeof v === 'number' && Number.isSafeInteger(v) && v > 0 && v <= max
      ? null
      : `must be an integer from 1 to ${max}`;
const CHECKS: Record<keyof ShopSandboxOptions, Check> = {
  // The sandbox checks these two itself (and names them the same way).
  clickParam: () => null,
  returnWindowDays: () => null,
  // The campaign's budget is 10,000 bids: it must stay a safe integer.
  bidMicros: integerUpTo(100_000_000_000),
  timeoutMs: integerUpTo(600_000),
};

function checkOptions(options: ShopSandboxOptions): void {
  if (options === null || typeof options !== 'object')
    throw new SandboxOptionsError('options', 'must be an object');
  for (const [key, value] of Object.entries(options)) {
    if (!Object.hasOwn(CHECKS, key)) throw new SandboxOptionsError(key, 'unknown option');
    const check = CHECKS[key as keyof ShopSandboxOptions];
    const problem = value === undefined ? null : check(value);
    if (problem !== null) throw new SandboxOptionsError(key, problem);
  }
}

/**
 * Starts a sandbox on a free loopback port with one account and one s2s campaign, for a shop's tests.
 *
 * @throws `SandboxOptionsError` naming a bad or unknown option
 * @example
 * ```ts
 * await using sandbox = await startShopSandbox();
 * const shopper = await sandbox.landWithClick('http://127.0.0.1:3000');
 * await shopper.post('/orders', { order_id: 'o-1', total_micros: 25_000_000 });
 * await sandbox.expectConversion({ orderId: 'o-1', valueMicros: 25_000_000 });
 * ```
 */
export async function startShopSandbox(options: ShopSandboxOptions = {}): Promise<ShopSandbox> {
  checkOptions(options);
  const clickParam = options.clickParam ?? DEFAULT_CLICK_PARAM;
  const bidMicros = options.bidMicros ?? DEFAULT_SHOP_BID_MICROS;
  const timeoutMs = options.timeoutMs ?? DEFAULT_EXPECT_TIMEOUT_MS;
  const sandbox = await startSandbox({
    clickParam,
    returnWindowDays: options.returnWindowDays ?? DEFAULT_RETURN_WINDOW_DAYS,
  });
  try {
    const { control } = sandbox;
    // Budget for 10,000 conversions, so a test never runs the campaign dry.
    const budgetMicros = bidMicros * 10_000;
    const account = await control.createAccount({ balance_micros: budgetMicros });
    const created = await fetch(`${sandbox.url}/v1/campaigns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.keys.write}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'shop test',
        pricing_model: 'cpa',
        conversion_source: 's2s',
        bid_micros: bidMicros,
        total_budget_micros: budgetMicros,
        creatives: [{ headline: 'Ad', body: 'A test ad', cta: 'Buy', landing_url: 'https://shop.example/' }],
      }),
    });
    if (!created.ok)
      throw new Error(`creating the campaign answered ${created.status}: ${await created.text()}`);
    const campaignId = ((await created.json()) as { id: string }).id;
    const close = () => sandbox.close();

    return {
      url: sandbox.url,
      apiKey: account.keys.conversions,
      accountId: account.account_id,
      campaignId,
      clickParam,
      now: () => sandbox.now(),
      control,
      advanceDays: (days) => sandbox.advance(Math.round(days * DAY_MS)),
      async landWithClick(appUrl, path = '/') {
        const click = await control.click(campaignId);
        const landingUrl = new URL(path, appUrl);
        landingUrl.searchParams.set(clickParam, click.click_token);
        const shopper = createShopper(appUrl);
        const response = await shopper.fetch(landingUrl.href);
        const landing = { status: response.status, headers: response.headers, text: await response.text() };
        if (landing.status >= 400)
          throw new Error(
            `landing on ${landingUrl.href} answered ${landing.status}: ${landing.text.slice(0, 500)}`,
          );
        return Object.assign(shopper, {
          clickToken: click.click_token,
          clickedAt: Date.parse(click.clicked_at),
          landingUrl: landingUrl.href,
          landing,
        });
      },
      ...shopExpectations(control, account.account_id, timeoutMs, DEFAULT_NO_CONVERSION_WAIT_MS),
      conversions: () => control.conversions(account.account_id),
      close,
      [Symbol.asyncDispose]: close,
    };
  } catch (error) {
    await sandbox.close();
    throw error;
  }
}

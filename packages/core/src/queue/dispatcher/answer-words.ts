/**
 * What the service said, without what we sent: a refusal's `detail` often echoes the request's own values
 * (the sandbox's `order_id <id> was already confirmed …`, `no confirmed order <id> for campaign <cmp>`),
 * and an order id, a campaign id or a click token may hold any word ("pixel", "expired"). Patterns that
 * give an answer its meaning are matched only against the detail with those values taken out.
 */

/** The values of one request that a service may echo back in its answer. */
export interface RequestValues {
  orderId?: string | null | undefined;
  campaignId?: string | null | undefined;
  clickToken?: string | null | undefined;
  valueMicros?: number | null | undefined;
  /** The key the request was sent with, when the caller knows it. */
  apiKey?: string | null | undefined;
}

/** What stands in the detail where a request value was. */
export const REQUEST_VALUE_PLACEHOLDER = '<sent>';

/**
 * The detail with every occurrence of the request's own values replaced by {@link REQUEST_VALUE_PLACEHOLDER}
 * (longest value first, so a value inside another goes with it). The value in micros is taken out only as a
 * whole number (not a run of digits inside a longer one). Pure: the text to match patterns against, never
 * the reason stored.
 *
 * @example
 * ```ts
 * withoutRequestValues('no confirmed order pixel-7 for campaign cmp_1', { orderId: 'pixel-7', campaignId: 'cmp_1' });
 * // "no confirmed order <sent> for campaign <sent>"
 * ```
 */
export function withoutRequestValues(detail: string, request: RequestValues): string {
  const texts = [request.orderId, request.campaignId, request.clickToken, request.apiKey]
    .filter((value): value is string => typeof value === 'string' && value.length > 0)
    .sort((a, b) => b.length - a.length);
  let out = detail;
  for (const value of texts) out = out.split(value).join(REQUEST_VALUE_PLACEHOLDER);
  const micros = request.valueMicros;
  if (typeof micros === 'number' && Number.isSafeInteger(micros)) {
    out = out.replace(new RegExp(`(?<!\\d)${String(micros)}(?!\\d)`, 'g'), REQUEST_VALUE_PLACEHOLDER);
  }
  return out;
}

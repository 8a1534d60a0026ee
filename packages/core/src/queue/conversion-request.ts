/**
 * The request a job is sent as — its path and its JSON body — built in one place, so what the Dispatcher
 * sends and what shadow mode records as "would have been sent" are the same bytes. The body holds no
 * secret: the API key travels in a header the client adds.
 */
import type { ConfirmJob, Job, RefundJob } from './job-types.ts';

/** The body of `POST /v1/conversions/s2s`. */
export interface ConfirmBody {
  click_token: string;
  order_id: string;
  value_micros: number;
}

/** The body of `POST /v1/conversions/s2s/refund`. */
export interface RefundBody {
  campaign_id: string;
  order_id: string;
}

/** A job's request: its path and body (a reversal's `campaign_id` is null until it is known). */
export type ConversionRequest =
  | { path: '/v1/conversions/s2s'; body: ConfirmBody }
  | { path: '/v1/conversions/s2s/refund'; body: { campaign_id: string | null; order_id: string } };

/** The body a confirm job is sent with. */
export function confirmBodyOf(job: ConfirmJob): ConfirmBody {
  return { click_token: job.clickToken, order_id: job.orderId, value_micros: job.valueMicros };
}

/**
 * The request a job is sent as (`POST`, JSON).
 *
 * @example
 * ```ts
 * conversionRequestOf(job); // { path: '/v1/conversions/s2s', body: { click_token, order_id, value_micros } }
 * ```
 */
export function conversionRequestOf(job: Job): ConversionRequest {
  if (job.kind === 'confirm') return { path: '/v1/conversions/s2s', body: confirmBodyOf(job) };
  return { path: '/v1/conversions/s2s/refund', body: refundBodyOf(job) };
}

/** The body a refund job is sent with (`campaign_id` null while unknown: such a job is not sent). */
export function refundBodyOf(job: RefundJob): { campaign_id: string | null; order_id: string } {
  return { campaign_id: job.campaignId, order_id: job.orderId };
}

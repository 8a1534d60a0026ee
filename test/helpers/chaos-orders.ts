/**
 * The orders of a chaos run as the test remembers them (to judge the sandbox's records against), and one
 * line per order for failure messages: its group, its job's state and reason, its tries, times as days
 * after the run's start.
 */
import type { AttemptRecord, Job } from '@postback/core';

const DAY_MS = 86_400_000;

/** One enqueued order. */
export interface ChaosOrder {
  account: string;
  orderId: string;
  campaignId: string;
  /** What the run did to it (e.g. `steady`, `outage`). */
  group: string;
  token: string;
  clickedAt: number;
  valueMicros: number;
  /** Sandbox time of the enqueue. */
  enqueuedAt: number;
  /** The deadline the outbox gave its job. */
  deadline: number;
  jobId: string;
  /** The pixel billed it (a pixel campaign's order). */
  pixelBilled: boolean;
}

/**
 * An order's key in the sandbox's records: its account and its order id.
 *
 * @example
 * ```ts
 * orderKey({ account: 'shop-a', orderId: 'ord-1' }); // "shop-a/ord-1"
 * ```
 */
export function orderKey(order: { account: string; orderId: string }): string {
  return `${order.account}/${order.orderId}`;
}

/**
 * One line about an order and its job (and its tries, when `history` is given), times as days after `t0`.
 *
 * @example
 * ```ts
 * describeOrder(t0, order, await outbox.get(order.jobId) ?? undefined, await outbox.history(order.jobId));
 * ```
 */
export function describeOrder(
  t0: number,
  order: ChaosOrder,
  job: Job | undefined,
  history?: readonly AttemptRecord[],
): string {
  const at = (t: number | null | undefined) =>
    t === null || t === undefined ? '-' : `${((t - t0) / DAY_MS).toFixed(3)}d`;
  const held = job?.heldAt === null || job?.heldAt === undefined ? 'no' : `yes (${job.heldCampaignId})`;
  const base =
    `${orderKey(order)} [${order.group}] job ${job?.state ?? 'missing'} attempts ${job?.attempts ?? '-'} ` +
    `enqueued ${at(order.enqueuedAt)} deadline ${at(order.deadline)} next ${at(job?.nextAttemptAt)} ` +
    `held ${held} reason ${JSON.stringify(job?.lastError ?? null)}`;
  if (history === undefined) return base;
  const tries = history.map((a) => `${at(a.startedAt)} ${a.outcome} ${a.status ?? 'no answer'}`).join('; ');
  return `${base} tries [${tries}]`;
}

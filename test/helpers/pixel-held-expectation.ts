/**
 * What a chaos run expects of the orders held while their campaign was on pixel, at the default
 * `onSwitch: 'ask'`: the pixel may have billed them, so after the switch to s2s they wait for a decision
 * and nothing sends them without one.
 */
import type { Job } from '@postback/core';
import type { SandboxConversion } from '@postback/sandbox';
import { type ChaosOrder, orderKey } from './chaos-orders.ts';

/**
 * No order is applied by s2s (no decision was taken), and each is either awaiting a decision (pending and
 * held) or ended with a reason (expired at its deadline, or dead or cancelled, with its `lastError`).
 * Returns one line per order that breaks it.
 *
 * @example
 * ```ts
 * expect(pixelHeldOrderProblems(held, jobs, applied, bid, now(), describe)).toEqual([]);
 * ```
 */
export function pixelHeldOrderProblems(
  orders: readonly ChaosOrder[],
  jobs: ReadonlyMap<string, Job>,
  applied: ReadonlyMap<string, SandboxConversion>,
  now: number,
  describe: (order: ChaosOrder) => string,
): string[] {
  const problems: string[] = [];
  for (const order of orders) {
    const job = jobs.get(order.jobId);
    const record = applied.get(orderKey(order));
    if (record !== undefined) {
      problems.push(`${describe(order)}: sent without a decision (charged ${record.charged_micros})`);
      continue;
    }
    const awaiting = job?.state === 'pending' && job.heldAt !== null && now <= order.deadline + 1;
    const ended =
      job !== undefined && ['dead', 'expired', 'cancelled'].includes(job.state) && !!job.lastError;
    if (!awaiting && !ended)
      problems.push(`${describe(order)}: neither applied, awaiting a decision nor ended`);
  }
  return problems;
}

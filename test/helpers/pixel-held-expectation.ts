/**
 * PROVISIONAL (issue 31 decides it; tighten after merge): what a chaos run expects of the orders held
 * while their campaign was on pixel. The pixel may have billed them, so after the switch to s2s they are
 * to wait for a decision (`onSwitch: 'ask'`) instead of being sent blindly; until that lands the run only
 * asks what every outcome must keep. One place, so the lead changes one function.
 */
import type { Job } from '@postback/core';
import type { SandboxConversion } from '@postback/sandbox';
import { type ChaosOrder, orderKey } from './chaos-orders.ts';

/**
 * Each order is applied at most once (the sandbox keeps an order id once: its charge is one bid), and it
 * is either applied, or awaiting a decision (pending and held, before its deadline), or ended with a reason
 * (dead, expired or cancelled, with its `lastError`). Returns one line per order that breaks it.
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
  bidMicros: number,
  now: number,
  describe: (order: ChaosOrder) => string,
): string[] {
  const problems: string[] = [];
  for (const order of orders) {
    const job = jobs.get(order.jobId);
    const record = applied.get(orderKey(order));
    if (record !== undefined) {
      if (record.charged_micros !== bidMicros)
        problems.push(`${describe(order)}: charged ${record.charged_micros}, not one bid`);
      continue;
    }
    const awaiting = job?.state === 'pending' && job.heldAt !== null && now <= order.deadline;
    const ended =
      job !== undefined && ['dead', 'expired', 'cancelled'].includes(job.state) && !!job.lastError;
    if (!awaiting && !ended)
      problems.push(`${describe(order)}: neither applied, awaiting a decision nor ended`);
  }
  return problems;
}

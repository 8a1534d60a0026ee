/**
 * A refusal that meets every job is about us, not the jobs (issue 30 item 8): a base URL ending in `/v1`,
 * a campaign's "not on s2s" worded otherwise than our pattern. When consecutive distinct jobs of one
 * account meet the same 4xx answer ({@link refusalKey}: its status and the service's words with the
 * request's own values taken out), the account is paused (cause `systematic-refusal`) instead of
 * dead-lettering each; one probe decides when it ends. Any delivery of the account ends its run.
 */
import { accountKey } from '../accounts.ts';
import type { Job } from '../job-types.ts';
import { withoutRequestValues } from './answer-words.ts';
import type { Failure } from './classify.ts';

/**
 * What makes two refusals "the same answer": the status and the reason with the job's own values (order
 * id, campaign id, value) taken out, so distinct orders meeting one cause compare equal. The one seam to
 * change what counts as the same.
 *
 * @example
 * ```ts
 * refusalKey(job, { status: 404, reason: 'Ad service answered 404: no order ord_1' }); // "404 Ad service answered 404: no order <sent>"
 * ```
 */
export function refusalKey(job: Job, failure: Pick<Failure, 'status' | 'reason'>): string {
  const words = withoutRequestValues(failure.reason, {
    orderId: job.orderId,
    campaignId: job.campaignId,
    valueMicros: job.kind === 'confirm' ? job.valueMicros : null,
  });
  return `${failure.status ?? 'none'} ${words}`;
}

/** The runs of identical refusals, per account; see {@link createRefusals}. */
export interface Refusals {
  /**
   * A job of its account met a 4xx `failure` we would dead-letter: true when it makes `threshold`
   * consecutive distinct jobs of the account refused alike (the account is then paused, the job kept).
   */
  refused(job: Job, failure: Failure): boolean;
  /** A job of `account` was delivered (or answered otherwise than refused): its run ends. */
  ended(account: string | null): void;
}

/** Creates the runs, none begun; `threshold` distinct jobs make a refusal systematic. */
export function createRefusals(threshold: number): Refusals {
  const runs = new Map<string, { key: string; jobs: Set<string> }>();
  return {
    refused(job, failure) {
      const account = accountKey(job.account);
      const key = refusalKey(job, failure);
      let run = runs.get(account);
      if (run === undefined || run.key !== key) {
        run = { key, jobs: new Set() };
        runs.set(account, run);
      }
      run.jobs.add(job.id);
      return run.jobs.size >= threshold;
    },
    ended(account) {
      runs.delete(accountKey(account));
    },
  };
}

/**
 * The job list of `GET api/jobs`: the query's filters, and one page of jobs. Every page costs one
 * bounded read of the store: at most `limit` jobs (1,000) from an offset of at most
 * {@link MAX_JOBS_OFFSET}. The reason filter ("text contained in the reason") is not handed to the store,
 * which would scan every job for a text found in none: it scans one window of
 * {@link REASON_SCAN_WINDOW} jobs of the list from the offset, and the answer's `next` continues the
 * scan where it stopped.
 */
import { JOB_STATES, type Job, type JobFilter, type Outbox } from '@postback/core';
import { validateAccount, validateOrderId } from '@postback/core/store';
import { isWellFormed } from './action-body.ts';
import { ClientError } from './answers.ts';
import { type DeadGroup, deadGroups, type JobView, jobView } from './views.ts';

/**
 * Deepest offset a job list pages to; past it, narrow the filter (state, account, order, status).
 * @defaultValue 10_000
 */
export const MAX_JOBS_OFFSET = 10_000;

/**
 * How many jobs of the list one request with a reason filter reads and tests.
 * @defaultValue 1_000
 */
export const REASON_SCAN_WINDOW = 1_000;

/** Jobs one page shows when the query names no `limit`. */
const DEFAULT_PAGE = 50;
const TEN_YEARS_MS = 10 * 365 * 86_400_000;

/** A filter of `api/jobs`, and the reason text it tests itself. */
export interface JobQuery {
  filter: JobFilter & { limit: number; offset: number };
  reason: RegExp | null;
}

const bad = (message: string) => new ClientError(400, message);

const integer = (name: string, value: string | null, min: number, max: number): number | undefined => {
  if (value === null || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw bad(`${name} must be an integer from ${min} to ${max}`);
  return n;
};

/** A user's text as a literal, case-insensitive pattern (operators type words, not regular expressions). */
const literal = (text: string) => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');

/** A reference (order id, account) as core checks it; a bad one is a 400 naming its field. */
function reference<T>(check: (value: unknown, field: string) => T, value: string, field: string): T {
  try {
    return check(value, field);
  } catch (error) {
    throw bad(error instanceof Error ? error.message : `invalid ${field}`);
  }
}

/**
 * The filter of a `GET api/jobs` query: `state` (repeatable), `kind`, `orderId`, `account` (exactly
 * that account) or `noAccount=1` (only jobs without one), `reason` (text contained in the reason),
 * `status`, `deadlineWithinMs`, `olderThanMs`, `limit` (1 to 1,000), `offset` (to {@link MAX_JOBS_OFFSET}).
 *
 * @throws {ClientError} 400 naming a bad value.
 * @example
 * ```ts
 * jobQuery(new URLSearchParams('state=dead&status=404'), Date.now());
 * ```
 */
export function jobQuery(query: URLSearchParams, now: number): JobQuery {
  const filter: JobQuery['filter'] = { limit: DEFAULT_PAGE, offset: 0 };
  const states = query.getAll('state').filter((s) => s !== '');
  for (const s of states) if (!(JOB_STATES as readonly string[]).includes(s)) throw bad('unknown state');
  if (states.length > 0) filter.states = states as JobFilter['states'];
  const kind = query.get('kind');
  if (kind === 'confirm' || kind === 'refund') filter.kind = kind;
  else if (kind !== null && kind !== '') throw bad('kind must be confirm or refund');
  const orderId = query.get('orderId');
  if (orderId !== null && orderId !== '') filter.orderId = reference(validateOrderId, orderId, 'orderId');
  const account = query.get('account');
  const noAccount = query.get('noAccount');
  if (noAccount !== null && noAccount !== '' && noAccount !== '0' && noAccount !== 'false') {
    if (account !== null && account !== '') throw bad('give account or noAccount, not both');
    filter.account = null;
  } else if (account !== null && account !== '') {
    filter.account = reference(validateAccount, account, 'account');
  }
  const text = query.get('reason');
  if (text !== null && !isWellFormed(text)) throw bad('reason must be well-formed Unicode');
  const status = integer('status', query.get('status'), 100, 599);
  if (status !== undefined) filter.status = status;
  const within = integer('deadlineWithinMs', query.get('deadlineWithinMs'), 0, TEN_YEARS_MS);
  if (within !== undefined) filter.deadlineBefore = now + within;
  const older = integer('olderThanMs', query.get('olderThanMs'), 0, TEN_YEARS_MS);
  if (older !== undefined) filter.updatedBefore = now - older;
  filter.limit = integer('limit', query.get('limit'), 1, 1_000) ?? DEFAULT_PAGE;
  filter.offset = integer('offset', query.get('offset'), 0, MAX_JOBS_OFFSET) ?? 0;
  return { filter, reason: text === null || text === '' ? null : literal(text.slice(0, 200)) };
}

/** One page of `GET api/jobs`. */
export interface JobsPage {
  jobs: JobView[];
  limit: number;
  offset: number;
  /** The offset of the next page, or null at the end of the list (or at {@link MAX_JOBS_OFFSET}). */
  next: number | null;
  /** With a reason filter: how many jobs of the list this page read and tested. */
  scanned?: number;
  /** With `group`: the group, or null when it is gone. */
  group?: DeadGroup | null;
}

const nextOffset = (at: number) => (at <= MAX_JOBS_OFFSET ? at : null);

/**
 * The page a `GET api/jobs` query asks for.
 *
 * @throws {ClientError} 400 for a bad query, or states this store cannot list.
 * @example
 * ```ts
 * const page = await jobsPage(outbox, new URLSearchParams('state=dead&reason=timeout'), 1_000, Date.now());
 * ```
 */
export async function jobsPage(
  outbox: Outbox,
  query: URLSearchParams,
  maxGroupedDead: number,
  now: number,
): Promise<JobsPage> {
  const { filter, reason } = jobQuery(query, now);
  const { limit, offset } = filter;
  const groupKey = query.get('group');
  if (groupKey !== null && groupKey !== '') {
    // One reason group's dead jobs (the other criteria do not apply to a group).
    const found = (await deadGroups(outbox, maxGroupedDead)).groups.find((g) => g.key === groupKey);
    const ids = found?.ids ?? [];
    const jobs = (await Promise.all(ids.slice(offset, offset + limit).map((id) => outbox.get(id)))).filter(
      (j): j is Job => j !== null,
    );
    const next = offset + limit < ids.length ? nextOffset(offset + limit) : null;
    return { jobs: jobs.map(jobView), limit, offset, next, group: found ?? null };
  }
  // A store that cannot list some states (SQS lists only its dead-letter queue) says so, not "none".
  const listable = outbox.features.listableStates;
  const unlisted = (filter.states ?? []).filter((state) => !listable.includes(state));
  if (unlisted.length > 0) throw bad(`this backend cannot list ${unlisted.join(', ')} jobs`);
  if (filter.states === undefined && listable.length < JOB_STATES.length) filter.states = listable;
  if (reason === null) {
    const jobs = await outbox.listJobs(filter);
    return {
      jobs: jobs.map(jobView),
      limit,
      offset,
      next: jobs.length === limit ? nextOffset(offset + limit) : null,
    };
  }
  const window = await outbox.listJobs({ ...filter, limit: REASON_SCAN_WINDOW, offset });
  const jobs: Job[] = [];
  let read = 0;
  for (const job of window) {
    read += 1;
    if (job.lastError !== null && reason.test(job.lastError)) jobs.push(job);
    if (jobs.length === limit) break;
  }
  const more = read < window.length || window.length === REASON_SCAN_WINDOW;
  return {
    jobs: jobs.map(jobView),
    limit,
    offset,
    next: more ? nextOffset(offset + read) : null,
    scanned: read,
  };
}

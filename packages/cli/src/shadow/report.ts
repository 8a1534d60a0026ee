/**
 * `postback shadow report`'s figures: per account and per UTC day since a time, side by side, the orders
 * with a click (confirmations enqueued) and their value, what shadow mode recorded as it would have sent
 * (and the request bodies), what the end of shadow mode dropped and what was delivered, and the service's
 * spend for the account's campaigns between the readings that bound the day (what the pixel billed).
 */
import { type Job, MAX_LIST_JOBS_LIMIT, type Outbox, type OutboxShadow } from '@postback/core';
import {
  type ConversionRequest,
  conversionRequestOf,
  isShadowDropped,
  isShadowRecorded,
  type ShadowSetting,
  type SpendReading,
} from '@postback/core/store';
import { totalSpend } from './spend.ts';

const DAY_MS = 86_400_000;

/** One account's day. Money in micros. */
export interface ShadowDay {
  account: string | null;
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  /** Confirmations enqueued that day (orders with a click) and their value. */
  orders: number;
  orders_value_micros: number;
  /** Of them, recorded in shadow mode and waiting for `shadow end`: what would have been sent. */
  recorded: number;
  recorded_value_micros: number;
  /** Reversals of the day recorded in shadow mode. */
  recorded_reversals: number;
  /** Of the orders, those `shadow end` dropped (billed by the pixel) and those delivered by s2s. */
  dropped: number;
  delivered: number;
  /**
   * The spend of the account's campaigns between `spend_from` and `spend_to` (the last readings at or
   * before the day's start and end), or null when no two readings bound the day.
   */
  spend_micros: number | null;
  spend_from: string | null;
  spend_to: string | null;
  /** The request of each job recorded that day, exactly as it would have been sent (no key). */
  requests: Array<ConversionRequest & { order_id: string }>;
}

/** The whole report. */
export interface ShadowReport {
  since: string;
  until: string;
  settings: Array<{ scope: ShadowSetting['scope']; account: string | null; since: string }>;
  days: ShadowDay[];
  notes: string[];
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const isoOf = (ms: number) => new Date(ms).toISOString();

/** Every job of `kind` (of `account` when given) created at or after `since`, page by page. */
async function jobsSince(
  outbox: Outbox,
  kind: Job['kind'],
  since: number,
  account: string | null | undefined,
): Promise<Job[]> {
  const jobs: Job[] = [];
  for (let offset = 0; ; offset += MAX_LIST_JOBS_LIMIT) {
    const filter = {
      kind,
      limit: MAX_LIST_JOBS_LIMIT,
      offset,
      ...(account === undefined ? {} : { account }),
    };
    const page = await outbox.listJobs(filter);
    jobs.push(...page.filter((job) => job.createdAt >= since));
    if (page.length < MAX_LIST_JOBS_LIMIT) return jobs;
  }
}

/** The last reading of `account` at or before `at`, or undefined. */
function lastReading(readings: readonly SpendReading[], account: string | null, at: number) {
  let found: SpendReading | undefined;
  for (const reading of readings) if (reading.account === account && reading.at <= at) found = reading;
  return found;
}

/** The jobs a report reads: confirmations since its start, and the reversals recorded in shadow mode. */
export interface ShadowJobs {
  confirms: Job[];
  refunds: Job[];
}

/** The jobs of the report from `since` (of `account` when given). */
export async function loadShadowJobs(
  outbox: Outbox,
  since: number,
  account: string | null | undefined,
): Promise<ShadowJobs> {
  const confirms = await jobsSince(outbox, 'confirm', since, account);
  const refunds = (await jobsSince(outbox, 'refund', since, account)).filter(isShadowRecorded);
  return { confirms, refunds };
}

/** The accounts the jobs belong to. */
export function accountsOf(jobs: ShadowJobs): Set<string | null> {
  return new Set([...jobs.confirms, ...jobs.refunds].map((job) => job.account));
}

/**
 * Builds the report from the jobs and the outbox's shadow settings and spend readings, for the days from
 * `since` to `now`; `account` (when given) keeps to one account.
 */
export async function shadowReport(
  shadow: OutboxShadow,
  jobs: ShadowJobs,
  options: { since: number; now: number; account?: string | null; notes?: string[] },
): Promise<ShadowReport> {
  const { since, now, account } = options;
  const { confirms, refunds } = jobs;
  // Readings from well before `since`: the one that bounds the first day's start.
  const readings = await shadow.spend({ since: Math.max(0, since - 30 * DAY_MS) });
  const rows = new Map<string, ShadowDay>();
  const row = (acct: string | null, day: string): ShadowDay => {
    const key = `${acct ?? ''}\u0001${day}`;
    let found = rows.get(key);
    if (found === undefined) {
      found = {
        account: acct,
        day,
        ...{
          orders: 0,
          orders_value_micros: 0,
          recorded: 0,
          recorded_value_micros: 0,
          recorded_reversals: 0,
        },
        ...{ dropped: 0, delivered: 0, spend_micros: null, spend_from: null, spend_to: null, requests: [] },
      };
      rows.set(key, found);
    }
    return found;
  };
  const accounts = new Set<string | null>(account === undefined ? [] : [account]);
  for (const reading of readings)
    if (account === undefined || reading.account === account) accounts.add(reading.account);
  for (const job of [...confirms, ...refunds]) accounts.add(job.account);
  // Every day of every account, so a day without orders still shows the spend the pixel billed.
  for (const acct of accounts)
    for (let day = Date.parse(dayOf(since)); day <= now; day += DAY_MS) row(acct, dayOf(day));
  for (const job of confirms) {
    if (job.kind !== 'confirm') continue;
    const r = row(job.account, dayOf(job.createdAt));
    r.orders += 1;
    r.orders_value_micros += job.valueMicros;
    if (isShadowRecorded(job)) {
      r.recorded += 1;
      r.recorded_value_micros += job.valueMicros;
      r.requests.push({ ...conversionRequestOf(job), order_id: job.orderId });
    }
    if (isShadowDropped(job)) r.dropped += 1;
    if (job.state === 'delivered') r.delivered += 1;
  }
  for (const job of refunds) {
    const r = row(job.account, dayOf(job.createdAt));
    r.recorded_reversals += 1;
    r.requests.push({ ...conversionRequestOf(job), order_id: job.orderId });
  }
  for (const r of rows.values()) {
    const start = Date.parse(r.day);
    // The last reading before the day, else its first (shadow mode began that day).
    const from =
      lastReading(readings, r.account, start) ??
      readings.find((x) => x.account === r.account && x.at >= start && x.at < start + DAY_MS);
    const to = lastReading(readings, r.account, Math.min(start + DAY_MS - 1, now));
    if (from !== undefined && to !== undefined && to.at > from.at) {
      r.spend_micros = totalSpend(to) - totalSpend(from);
      r.spend_from = isoOf(from.at);
      r.spend_to = isoOf(to.at);
    }
  }
  const settings = (await shadow.settings()).map((s) => ({ ...s, since: isoOf(s.since) }));
  const days = [...rows.values()].sort(
    (a, b) => (a.account ?? '').localeCompare(b.account ?? '') || a.day.localeCompare(b.day),
  );
  return { since: isoOf(since), until: isoOf(now), settings, days, notes: options.notes ?? [] };
}

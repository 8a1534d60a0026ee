/**
 * The checks {@link doctor} makes on this side: the outbox (opens, migrated, answers), a live worker, the
 * campaigns the outbox's recent answers named as not on s2s, and the cookie secret. Nothing is written.
 */
import { type Job, type JobState, MAX_LIST_JOBS_LIMIT, MIN_SECRET_LENGTH, type Outbox } from '@postback/core';
import { duration, iso, relative } from '../format.ts';
import type { ResolvedDoctorOptions } from './options.ts';
import { type DoctorCheck, fail, pass, skip } from './types.ts';

/** The opened outbox, or the failed `outbox` check. */
export interface OpenedOutbox {
  check: DoctorCheck;
  outbox: Outbox | null;
  /** Whether doctor opened it (and so closes it). */
  opened: boolean;
}

/** `outbox`: it opens (a current schema: the CLI's reading open refuses an older one) and answers. */
export async function checkOutbox(
  given: ResolvedDoctorOptions['outbox'],
  now: number,
): Promise<OpenedOutbox> {
  if (given === undefined)
    return { check: skip('outbox', 'not checked: no outbox given'), outbox: null, opened: false };
  let outbox: Outbox;
  const opened = typeof given === 'function';
  try {
    outbox = typeof given === 'function' ? await given() : given;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const fix = /schema|migrat/i.test(message)
      ? 'run `postback migrate` (Postgres) or open it once with `postback worker` (SQLite) to bring its schema up to date'
      : "check the path or URL: the worker's --db, --pg or --sqs";
    return {
      check: fail('outbox', `cannot open it: ${message}`, fix),
      outbox: null,
      opened: false,
    };
  }
  try {
    const { counts } = await outbox.stats(now);
    // Every state the store counts, known to this version or not.
    const parts = Object.entries(counts as Record<string, number>).filter(([, n]) => n > 0);
    const total = parts.reduce((sum, [, n]) => sum + n, 0);
    const shown = parts.map(([state, n]) => `${n} ${state}`).join(', ');
    return {
      check: pass('outbox', `opens and answers: ${total} job(s)${shown === '' ? '' : ` (${shown})`}`),
      outbox,
      opened,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      check: fail('outbox', `opens but does not answer: ${message}`, 'check the database'),
      outbox,
      opened,
    };
  }
}

/** `worker`: some worker beat within the window and is not paused. */
export async function checkWorker(
  outbox: Outbox | null,
  now: number,
  withinMs: number,
): Promise<DoctorCheck> {
  if (outbox === null) return skip('worker', 'not checked: no outbox');
  if (!outbox.features.heartbeats)
    return skip('worker', 'not checked: this backend keeps no worker heart-beats (SQS)');
  const live = (await outbox.workers({ now, sinceMs: withinMs })).filter((beat) => beat.state !== 'stopped');
  if (live.length === 0)
    return fail(
      'worker',
      `no running worker beat in the last ${duration(withinMs)}`,
      'start `postback worker` (a `--drain` run beats none) or your Dispatcher with `start()`',
    );
  const paused = live.filter((beat) => beat.state === 'paused' || beat.state === 'probing');
  const named = live
    .map((beat) => `${beat.workerId} (${beat.state}, seen ${relative(beat.at, now)})`)
    .join(', ');
  if (paused.length === live.length)
    return fail(
      'worker',
      `every live worker is paused: ${paused.map((b) => `${b.workerId}: ${b.pauseReason ?? 'no reason given'}`).join('; ')}`,
      'see the key and base-url checks; a paused worker probes the service again by itself',
    );
  return pass('worker', `${live.length} live worker(s): ${named}`);
}

/** A campaign id as the service writes it, in a reason. */
const CAMPAIGN_IN_TEXT = /\bcmp_[A-Za-z0-9_-]+/;

/** The jobs of one campaign named as not on s2s. */
interface NamedCampaign {
  states: Map<string, number>;
  last: number;
  reason: string;
}

/** The jobs not delivered whose reason matches, changed within the window. */
async function jobsNamingPixel(outbox: Outbox, options: ResolvedDoctorOptions, now: number): Promise<Job[]> {
  // Held jobs stay pending (issue 22), dead ones wait for a replay; delivered ones are fixed.
  const wanted: JobState[] = ['pending', 'inflight', 'dead'];
  const states = wanted.filter((state) => outbox.features.listableStates.includes(state));
  const found: Job[] = [];
  for (let offset = 0; ; offset += MAX_LIST_JOBS_LIMIT) {
    const page = await outbox.listJobs({
      states,
      reason: options.notS2sPattern,
      limit: MAX_LIST_JOBS_LIMIT,
      offset,
    });
    found.push(...page.filter((job) => job.updatedAt >= now - options.recentWithinMs));
    if (page.length < MAX_LIST_JOBS_LIMIT) return found;
  }
}

/** The problems a store reports as held (`stats().held`, issue 22), read tolerantly; none before it. */
function heldProblems(
  stats: unknown,
): Array<{ campaignId: string | null; reason: string; since: number; count: number }> {
  const held = (stats as { held?: unknown } | null)?.held;
  if (!Array.isArray(held)) return [];
  return held.flatMap((p: { campaignId?: unknown; reason?: unknown; since?: unknown; count?: unknown }) =>
    typeof p?.count === 'number'
      ? [
          {
            campaignId: typeof p.campaignId === 'string' ? p.campaignId : null,
            reason: typeof p.reason === 'string' ? p.reason : '',
            since: typeof p.since === 'number' ? p.since : 0,
            count: p.count,
          },
        ]
      : [],
  );
}

/**
 * `recent-answers`: no job answered recently that its campaign is not on s2s. Names each campaign the
 * answers gave (from the reason, else the job's campaign), with its jobs by state.
 */
export async function checkRecentAnswers(
  outbox: Outbox | null,
  options: ResolvedDoctorOptions,
  now: number,
  sources: ReadonlyMap<string, string | null>,
): Promise<DoctorCheck> {
  if (outbox === null) return skip('recent-answers', 'not checked: no outbox');
  const byCampaign = new Map<string, NamedCampaign>();
  const note = (campaign: string, state: string, count: number, at: number, reason: string) => {
    const entry = byCampaign.get(campaign) ?? { states: new Map(), last: 0, reason };
    entry.states.set(state, (entry.states.get(state) ?? 0) + count);
    if (at >= entry.last) Object.assign(entry, { last: at, reason });
    byCampaign.set(campaign, entry);
  };
  for (const job of await jobsNamingPixel(outbox, options, now)) {
    const campaign = CAMPAIGN_IN_TEXT.exec(job.lastError ?? '')?.[0] ?? job.campaignId ?? 'campaign unknown';
    note(campaign, job.state, 1, job.updatedAt, job.lastError ?? '');
  }
  for (const problem of heldProblems(await outbox.stats(now))) {
    const campaign = problem.campaignId ?? CAMPAIGN_IN_TEXT.exec(problem.reason)?.[0] ?? 'campaign unknown';
    if (!byCampaign.has(campaign)) note(campaign, 'held', problem.count, problem.since, problem.reason);
  }
  const window = duration(options.recentWithinMs);
  if (byCampaign.size === 0)
    return pass('recent-answers', `no answer of the last ${window} says a campaign is not on s2s`);
  const named = [...byCampaign.entries()].map(([campaign, entry]) => {
    const states = [...entry.states.entries()].map(([state, n]) => `${n} ${state}`).join(', ');
    const now2s = sources.get(campaign) === 's2s' ? '; the campaign list now shows s2s' : '';
    return `${campaign}: ${states}, last ${iso(entry.last)}${now2s} (${entry.reason})`;
  });
  return fail(
    'recent-answers',
    `answers of the last ${window} say ${byCampaign.size} campaign(s) are not on s2s: ${named.join('; ')}`,
    "switch each to s2s in the dashboard (campaign settings, conversion source), then replay the dead jobs: postback dlq replay --reason 's2s'",
  );
}

/** `secret`: the cookie secret is set and at least `MIN_SECRET_LENGTH` characters long (never shown). */
export function checkSecret(secret: string | null | undefined): DoctorCheck {
  if (secret === undefined) return skip('secret', 'not checked: no secret given');
  const fix = `set POSTBACK_SECRET to at least ${MIN_SECRET_LENGTH} random characters (openssl rand -base64 32)`;
  if (secret === null || secret === '') return fail('secret', 'POSTBACK_SECRET is not set', fix);
  if (secret.length < MIN_SECRET_LENGTH)
    return fail(
      'secret',
      `POSTBACK_SECRET has ${secret.length} characters, fewer than ${MIN_SECRET_LENGTH}`,
      fix,
    );
  return pass('secret', `POSTBACK_SECRET is set and long enough (at least ${MIN_SECRET_LENGTH} characters)`);
}

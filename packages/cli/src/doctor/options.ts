/**
 * The options of {@link doctor}: one zod schema (unknown keys refused, bad values named by an
 * `OptionsError`) that is the single source of their types, defaults and validation, and of the README
 * table, which a test keeps equal to {@link renderDoctorOptionsTable}'s rendering.
 */
import { DEFAULT_TIMEOUT_MS } from '@postback/client';
import {
  DEFAULT_CAMPAIGN_NOT_S2S_PATTERN,
  DEFAULT_CONFIRM_WINDOW_MS,
  DEFAULT_SAFETY_MARGIN_MS,
  type Outbox,
} from '@postback/core';
import { documented, parseOptions, renderOptionsTable } from '@postback/core/store';
import { DEFAULT_WORKER_SEEN_WITHIN_MS } from '@postback/dashboard';
import { z } from 'zod';
import { CHECK_NAMES, type CheckName } from './types.ts';

/**
 * What a 4xx `detail` says when a campaign is not on s2s (its conversion source is the pixel): core's
 * `DEFAULT_CAMPAIGN_NOT_S2S_PATTERN`, the Dispatcher's default `campaignNotS2sPattern`.
 * @defaultValue `/conversion source|not (?:on |set to |using )?s2s|pixel/i`
 */
export const DEFAULT_NOT_S2S_PATTERN: RegExp = DEFAULT_CAMPAIGN_NOT_S2S_PATTERN;

/**
 * How far back the answers of the outbox's jobs count as recent for the pixel-billing check: one
 * confirmation window (7 days), the life of a confirm job.
 * @defaultValue 604_800_000 (7 days)
 */
export const DEFAULT_RECENT_WITHIN_MS = DEFAULT_CONFIRM_WINDOW_MS;

const positiveMs = z.int({ error: 'must be a positive integer of milliseconds' }).min(1).max(2_147_483_647);
const nonNegativeMs = z.int({ error: 'must be a non-negative integer of milliseconds' }).min(0);
const isOutbox = (v: unknown) =>
  typeof v === 'function' || typeof (v as Outbox | null)?.listJobs === 'function';

/** The schema of {@link doctor}'s options. */
export const doctorOptionsSchema = z.strictObject({
  baseUrl: documented(
    z.url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' }),
    'string',
    'required',
    "The service's base URL, as the worker's `baseUrl` (the part before `/v1`).",
  ),
  apiKey: documented(
    z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).optional(),
    'string',
    '—',
    'The key to check. Absent: the `key` check fails (the other service checks still run without one).',
  ),
  outbox: documented(
    z
      .custom<Outbox | (() => Promise<Outbox>)>(isOutbox, {
        error: 'must be an Outbox or a function opening one',
      })
      .optional(),
    'Outbox \\| () => Promise<Outbox>',
    '—',
    'The outbox to check. A function is called (a throw fails the `outbox` check with its message) and the outbox it opened is closed at the end; an `Outbox` is left open. Absent: the outbox checks are skipped.',
  ),
  secret: documented(
    z.string({ error: 'must be a string or null' }).nullable().optional(),
    'string \\| null',
    '—',
    'The cookie secret to check (never shown); `null`: it is not set where it should be (the check fails); absent: not checked.',
  ),
  skip: documented(
    z.array(z.enum(CHECK_NAMES, { error: `must list check names: ${CHECK_NAMES.join(', ')}` })).default([]),
    'CheckName[]',
    '`[]`',
    'Checks not to run: reported with `status: "skip"`.',
  ),
  safetyMarginMs: documented(
    nonNegativeMs.default(DEFAULT_SAFETY_MARGIN_MS),
    'number',
    "`3_600_000` (1 h, core's `DEFAULT_SAFETY_MARGIN_MS`)",
    "The largest clock difference with the service's `Date` that passes.",
  ),
  workerSeenWithinMs: documented(
    positiveMs.default(DEFAULT_WORKER_SEEN_WITHIN_MS),
    'number',
    '`120_000` (2 min)',
    'A worker whose last heart-beat is older does not count as live.',
  ),
  recentWithinMs: documented(
    positiveMs.default(DEFAULT_RECENT_WITHIN_MS),
    'number',
    '`604_800_000` (7 days)',
    'Jobs whose last answer is this recent count for the `recent-answers` check.',
  ),
  notS2sPattern: documented(
    z.instanceof(RegExp, { error: 'must be a RegExp' }).default(DEFAULT_NOT_S2S_PATTERN),
    'RegExp',
    '`DEFAULT_NOT_S2S_PATTERN`',
    "A job's reason matching it names a campaign not on s2s (the Dispatcher's `campaignNotS2sPattern`).",
  ),
  timeoutMs: documented(
    positiveMs.default(DEFAULT_TIMEOUT_MS),
    'number',
    "`10_000` (the client's `DEFAULT_TIMEOUT_MS`)",
    'One request to the service.',
  ),
  now: documented(
    z
      .custom<() => number>((v) => typeof v === 'function', { error: 'must be a function' })
      .default(() => Date.now),
    '() => number',
    '`Date.now`',
    "This host's clock (epoch milliseconds), compared with the service's.",
  ),
  fetch: documented(
    z
      .custom<typeof globalThis.fetch>((v) => typeof v === 'function', { error: 'must be a fetch function' })
      .optional(),
    'typeof fetch',
    'the global `fetch`',
    'Sends the requests (an injected one for tests or a proxy agent).',
  ),
});

/** What {@link doctor} takes, as the caller writes it. */
export type DoctorOptions = z.input<typeof doctorOptionsSchema>;
/** {@link DoctorOptions} with the defaults filled in. */
export type ResolvedDoctorOptions = z.output<typeof doctorOptionsSchema>;

/**
 * Checks the options and fills in the defaults.
 *
 * @throws {OptionsError} naming the first bad or unknown option.
 * @example
 * ```ts
 * resolveDoctorOptions({ baseUrl: 'https://ads.example' }).safetyMarginMs; // 3_600_000
 * ```
 */
export function resolveDoctorOptions(options: DoctorOptions): ResolvedDoctorOptions {
  return parseOptions(doctorOptionsSchema, options);
}

/**
 * The README's table of {@link doctor}'s options, rendered from the schema.
 *
 * @example
 * ```ts
 * console.log(renderDoctorOptionsTable());
 * ```
 */
export function renderDoctorOptionsTable(): string {
  return renderOptionsTable(doctorOptionsSchema.shape);
}

/** Whether a check is to be run. */
export function wanted(options: Pick<ResolvedDoctorOptions, 'skip'>, name: CheckName): boolean {
  return !options.skip.includes(name);
}

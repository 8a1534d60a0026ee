/**
 * `doctor()`: what must hold for a shop's conversions to be paid, checked one by one — the service's
 * address, the key and its scopes, the clock, campaigns on pixel billing (listed, and named by the
 * outbox's recent answers), the outbox, a live worker and the cookie secret. `postback doctor` prints it.
 * It sends nothing that costs anything and writes nothing; no text it returns holds the key or the secret.
 */
import { type AdServiceClient, createClient, createRedactor } from '@postback/client';
import { endsInVersion } from '../base-url.ts';
import { recordingFetch, type TimedAnswer } from './answers.ts';
import { checkOutbox, checkRecentAnswers, checkSecret, checkWorker } from './local-checks.ts';
import { type DoctorOptions, resolveDoctorOptions, wanted } from './options.ts';
import { checkBaseUrl, checkCampaigns, checkClock, checkKey } from './service-checks.ts';
import { CHECK_NAMES, type CheckName, type DoctorCheck, type DoctorReport, fail, skip } from './types.ts';

export {
  DEFAULT_NOT_S2S_PATTERN,
  DEFAULT_RECENT_WITHIN_MS,
  type DoctorOptions,
  doctorOptionsSchema,
  type ResolvedDoctorOptions,
  renderDoctorOptionsTable,
} from './options.ts';
export {
  CHECK_NAMES,
  type CheckName,
  type CheckStatus,
  type DoctorCheck,
  type DoctorReport,
} from './types.ts';

/**
 * Runs every check (but those in `skip`) and returns each one's result, in {@link CHECK_NAMES} order.
 * A check whose prerequisite failed is skipped and says why (no key check when the address does not
 * answer like the service). Never throws for what it finds: only for bad options (`OptionsError`).
 *
 * @example
 * ```ts
 * import { doctor } from '@postback/cli';
 * import { createSqliteOutbox } from '@postback/sqlite';
 *
 * const report = await doctor({
 *   baseUrl: 'https://ads.example',
 *   apiKey: process.env.POSTBACK_API_KEY,
 *   outbox: async () => createSqliteOutbox({ filename: 'postback.db', readOnly: true }),
 *   secret: process.env.POSTBACK_SECRET ?? null,
 * });
 * for (const check of report.checks) if (!check.ok) console.error(`${check.name}: ${check.detail} (${check.fix})`);
 * ```
 */
export async function doctor(options: DoctorOptions): Promise<DoctorReport> {
  const o = resolveDoctorOptions(options);
  const secrets = [o.apiKey, o.secret].filter((s): s is string => typeof s === 'string' && s !== '');
  const redact = createRedactor(secrets);
  const answers: TimedAnswer[] = [];
  const send = recordingFetch(o.fetch ?? globalThis.fetch, o.now, answers);
  const results = new Map<CheckName, DoctorCheck>();
  const run = async (name: CheckName, check: () => Promise<DoctorCheck> | DoctorCheck) => {
    if (!wanted(o, name)) return void results.set(name, skip(name, 'skipped, as asked'));
    try {
      results.set(name, await check());
    } catch (error) {
      // A store or a request that failed under a check: that check fails, the others still run.
      const message = error instanceof Error ? error.message : String(error);
      results.set(name, fail(name, `could not be checked: ${message}`, 'try again; see the other checks'));
    }
  };
  // No client for a base URL ending in /v1 (it refuses one): the base-url check says what to fix.
  const client: AdServiceClient | null =
    o.apiKey === undefined || endsInVersion(o.baseUrl)
      ? null
      : createClient({
          baseUrl: o.baseUrl,
          apiKey: o.apiKey,
          fetch: send,
          retry: false,
          timeout: o.timeoutMs,
        });
  let opened: Awaited<ReturnType<typeof checkOutbox>> | undefined;
  try {
    await run('base-url', () => checkBaseUrl(send, o.baseUrl, o.timeoutMs, o.apiKey));
    const service = results.get('base-url')?.ok === true;
    const notService = (name: CheckName) =>
      skip(name, 'not checked: the base URL does not answer like the service (see base-url)');
    let canRead: boolean | null = null;
    await run('key', async () => {
      if (!service) return notService('key');
      const found = await checkKey(client);
      canRead = found.canRead;
      return found.check;
    });
    let sources = new Map<string, string | null>();
    await run('campaigns', async () => {
      if (!service) return notService('campaigns');
      const found = await checkCampaigns(client, canRead);
      sources = found.sources;
      return found.check;
    });
    // Last of the service checks: it reads the `Date` of every answer above.
    await run('clock', () => (service ? checkClock(answers, o.safetyMarginMs) : notService('clock')));
    opened = await checkOutbox(wanted(o, 'outbox') ? o.outbox : undefined, o.now());
    if (wanted(o, 'outbox')) results.set('outbox', opened.check);
    else results.set('outbox', skip('outbox', 'skipped, as asked'));
    const outbox = opened.outbox;
    await run('recent-answers', () => checkRecentAnswers(outbox, o, o.now(), sources));
    await run('worker', () => checkWorker(outbox, o.now(), o.workerSeenWithinMs));
    await run('secret', () => checkSecret(o.secret));
  } finally {
    await client?.close();
    if (opened?.opened) await opened.outbox?.close();
  }
  const checks = CHECK_NAMES.map((name) => {
    const check = results.get(name) as DoctorCheck;
    return { ...check, detail: redact(check.detail), fix: check.fix === null ? null : redact(check.fix) };
  });
  return { ok: checks.every((check) => check.ok), checks };
}

/**
 * How a `worker --drain` run ends when something still holds jobs back: its exit code and the one
 * stderr line that names the cause. A refused key (401/403) exits 4, an answer that is not the service's
 * 5, a 429's pause that outlasts what the run may wait 6 with "rate-limited until <ISO time>". Reasons are
 * the Dispatcher's (already redacted) and are scrubbed of the keys again all the same.
 */
import type { AccountPause } from '@postback/core';
import { EXIT } from './args.ts';
import { iso, jsonText, text } from './format.ts';
import { type GlobalPause, isRateLimit } from './worker-rate-limit.ts';

/** What the end of a drain looks at. */
export interface DrainEnd {
  /** Whether all delivery is paused now, and the pause the worker last heard of. */
  paused: boolean;
  pause: GlobalPause | null;
  /** The accounts paused now (any key set-up: a 429 pauses an account with per-account keys). */
  accounts: readonly AccountPause[];
  /** Keys come per account: a refused or missing account key ends the run with exit 4. */
  perAccount: boolean;
  redact: (text: string) => string;
  stderr(text: string): void;
}

/**
 * The exit code of a drain that ran to its end, after one stderr line per cause that left jobs pending.
 *
 * @example
 * ```ts
 * return drainExit({ paused: dispatcher.paused(), pause, accounts: await dispatcher.pausedAccounts(), perAccount, redact, stderr });
 * ```
 */
export function drainExit(end: DrainEnd): number {
  const say = (line: string) => end.stderr(`${line}\n`);
  if (end.paused) {
    const pause = end.pause;
    if (pause !== null && isRateLimit(pause)) {
      say(
        text`postback worker: rate-limited until ${iso(pause.until)}, jobs left pending for the next run: ${end.redact(pause.reason)}`,
      );
      return EXIT.rateLimited;
    }
    const keyRefused = pause === null || pause.status === 401 || pause.status === 403;
    const what = keyRefused
      ? 'the service refused the API key; check POSTBACK_API_KEY and its scopes'
      : "the answers are not the ad service's; check --base-url / POSTBACK_API_URL";
    const reason = pause === null ? '' : `: ${end.redact(pause.reason)}`;
    say(text`postback worker: delivery paused, jobs left pending (${what})${reason}`);
    return keyRefused ? EXIT.keyRefused : EXIT.misconfigured;
  }
  const limited = end.accounts.filter((p) => isRateLimit(p));
  const refused = end.perAccount ? end.accounts.filter((p) => !isRateLimit(p)) : [];
  const named = (p: AccountPause) => (p.account === null ? '(no account)' : jsonText(p.account));
  if (limited.length > 0) {
    let until = (limited[0] as AccountPause).until;
    for (const p of limited) if (p.until > until) until = p.until;
    const which = limited.map((p) => `${named(p)} until ${iso(p.until)}`).join(', ');
    say(
      text`postback worker: rate-limited until ${iso(until)}, the jobs of ${limited.length} account(s) left pending for the next run: ${which}`,
    );
  }
  if (refused.length > 0) {
    const which = refused.map((p) => `${named(p)} (${end.redact(p.reason)})`).join(', ');
    say(
      text`postback worker: ${refused.length} account(s) paused, their jobs left pending (check --keys-file / POSTBACK_API_KEY): ${which}`,
    );
    // A key to fix outranks a wait: the operator has something to do.
    return EXIT.keyRefused;
  }
  return limited.length > 0 ? EXIT.rateLimited : EXIT.ok;
}

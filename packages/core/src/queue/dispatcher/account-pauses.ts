/**
 * Pauses of single accounts, for a Dispatcher given `apiKeyFor` (one key per advertiser account). A
 * 401/403 on an account's key, or no key for it, pauses that account only: its jobs are left out of claims
 * (they wait, their attempts uncounted) while every other account keeps delivering. After `authPauseMs`
 * one job of the account probes its key (the resolver is asked again, so a key restored in the keys file
 * is picked up); any other answer of the service ends the pause, a 401/403 extends it.
 *
 * ```
 * active ──401/403 or no key──► paused ──authPauseMs later, at a claim──► probing (one job sent)
 * probing ──any other answer──► active          probing ──401/403──► paused (same outage: no new event)
 * ```
 * One `account-paused` event per outage, one `account-resumed` when it ends.
 */
import type { EpochMs } from '../../policy.ts';
import { accountKey } from '../accounts.ts';
import type { AccountPause } from '../operator-types.ts';
import type { Emit } from './events.ts';

/** What the pauses need. */
export interface AccountPausesContext {
  now: () => EpochMs;
  authPauseMs: number;
  emit: Emit;
}

/** The paused accounts of one Dispatcher; see the module header. */
export interface AccountPauses {
  /** Accounts whose jobs claims leave out now: paused, or probing with the probe under way. */
  excluded(): (string | null)[];
  /**
   * What to do with a claimed job of `account` now: `send` it (the account is not paused), send it as the
   * account's `probe` (its pause is up: the first job to come tests the key), or `defer` it (paused, or
   * another job is probing).
   */
  admit(account: string | null): 'send' | 'probe' | 'defer';
  /** When a job of `account` held back by {@link admit} should be due again. */
  dueAgain(account: string | null): EpochMs;
  /** The key of `account` was refused (or none is known): pause it, or extend the pause of the same outage. */
  pause(account: string | null, failure: { status: number | null; reason: string }): void;
  /** The service answered a job of `account` otherwise: its pause, if any, ends. */
  resume(account: string | null): void;
  /** The probe of `account` is no longer under way (whatever its outcome): one left unanswered may be retried. */
  probeEnded(account: string | null): void;
  /** The accounts paused now, oldest pause first. */
  list(): AccountPause[];
  /** Account pauses begun since the Dispatcher was created (one per outage). */
  readonly pauses: number;
}

interface Entry extends AccountPause {
  /** A probe of this account is under way. */
  probing: boolean;
}

/** Creates the pauses, none paused. */
export function createAccountPauses(ctx: AccountPausesContext): AccountPauses {
  const entries = new Map<string, Entry>();
  let pauses = 0;

  return {
    get pauses() {
      return pauses;
    },

    excluded() {
      const at = ctx.now();
      const out: (string | null)[] = [];
      for (const entry of entries.values()) if (entry.probing || at < entry.until) out.push(entry.account);
      return out;
    },

    admit(account) {
      const entry = entries.get(accountKey(account));
      if (entry === undefined) return 'send';
      if (entry.probing || ctx.now() < entry.until) return 'defer';
      entry.probing = true;
      return 'probe';
    },

    dueAgain(account) {
      const at = ctx.now();
      const entry = entries.get(accountKey(account));
      // While a probe is under way the account is left out of claims anyway: due now, it is taken as soon
      // as the probe proves the key.
      return entry === undefined || entry.probing ? at : Math.max(at, entry.until);
    },

    pause(account, failure) {
      const at = ctx.now();
      const key = accountKey(account);
      const until = at + ctx.authPauseMs;
      const entry = entries.get(key);
      if (entry !== undefined) {
        // Still the same outage: one alert per outage.
        Object.assign(entry, { until, reason: failure.reason, status: failure.status, probing: false });
        return;
      }
      entries.set(key, {
        account,
        since: at,
        until,
        reason: failure.reason,
        status: failure.status,
        probing: false,
      });
      pauses += 1;
      ctx.emit('account-paused', { account, status: failure.status, reason: failure.reason, until });
    },

    resume(account) {
      const key = accountKey(account);
      const entry = entries.get(key);
      if (entry === undefined) return;
      entries.delete(key);
      ctx.emit('account-resumed', { account, pausedForMs: ctx.now() - entry.since });
    },

    probeEnded(account) {
      const entry = entries.get(accountKey(account));
      if (entry !== undefined) entry.probing = false;
    },

    list() {
      return [...entries.values()]
        .sort((a, b) => a.since - b.since)
        .map(({ account, since, until, reason, status }) => ({ account, since, until, reason, status }));
    },
  };
}

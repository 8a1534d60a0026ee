/**
 * Every pause of delivery in one table, keyed by whose delivery it holds back: one advertiser account's
 * (with `apiKeyFor`), or everyone's, which is one more key ({@link ALL_ACCOUNTS}). A pause is not the
 * job's fault: every other job of its scope would meet it too, so they wait, their attempts uncounted.
 * An entry records each cause that holds it (`auth`: a refused key, no key for an account, or an
 * answer that is not the service's; `rate-limited`: a 429), with its own reason and end; after the end one job probes, and the
 * service's answer ends the pause or extends it.
 *
 * ```
 * none ──401/403, 429 (or no key)──► paused ──until passed──► probing (one job sent) ──any other answer──► none
 *                                       ▲                         │
 *                                       └──────401/403, 429───────┘ (same outage: no new event)
 * ```
 * Everyone's pause is probed once claiming resumes (one job at a time is claimed and sent), and only its
 * probe's answer ends it; an account's pause is probed by the first of its jobs to come once it is up,
 * and any answer to one of its jobs ends it. One `paused` (`account-paused`) event per outage, one
 * `resumed` (`account-resumed`) when it ends.
 */
import type { EpochMs } from '../../policy.ts';
import { accountKey } from '../accounts.ts';
import type { AccountPause, PauseCause } from '../outbox-types.ts';
import type { Emit } from './events.ts';

/** Where the Dispatcher is: `paused` after a 401/403, `probing` while one job tests the key again. */
export type DispatcherState = 'idle' | 'running' | 'paused' | 'probing' | 'stopping';

/** Why delivery is paused; see `outbox-types.ts`. */
export type { PauseCause } from '../outbox-types.ts';

/** The key of the pause of all delivery (no account is a symbol). */
export const ALL_ACCOUNTS: unique symbol = Symbol('all accounts');

/** Whose delivery a pause holds back: one account's (null: jobs without one), or {@link ALL_ACCOUNTS}. */
export type PauseScope = string | null | typeof ALL_ACCOUNTS;

/** What a cause says: why, with which status, and until when. */
interface Hold {
  cause: PauseCause;
  reason: string;
  status: number | null;
  until: EpochMs;
}

/** One scope's pause. */
interface Entry {
  scope: PauseScope;
  since: EpochMs;
  causes: Map<PauseCause, Hold>;
  /** Its probe is under way (everyone's: claiming resumed one job at a time). */
  probing: boolean;
}

/** What the table needs. */
export interface PausesContext {
  now: () => EpochMs;
  /** How long a refused key pauses its scope before a probe. */
  authPauseMs: number;
  emit: Emit;
}

/** What to do with a claimed job now; see {@link PauseTable.admit}. */
export type Admission =
  | { verdict: 'send' | 'probe' }
  | { verdict: 'defer'; until: EpochMs; reason: 'delivery paused' | 'delivery paused for this account' };

/** The pauses of one Dispatcher; see the module header. */
export interface PauseTable {
  /**
   * Pauses `scope` for `cause` (or extends the pause of the same outage) for `forMs` (default
   * `authPauseMs`), ending by `endBy` at the latest (the wait rule's probe time); returns when its jobs
   * are due.
   */
  pause(
    scope: PauseScope,
    cause: PauseCause,
    failure: { status: number | null; reason: string },
    forMs?: number,
    endBy?: EpochMs | null,
  ): EpochMs;
  /** The service answered a job of `account` otherwise (whatever its outcome): the pauses it disproves end. */
  answered(account: string | null): void;
  /** Whether claiming may proceed; a pause of everyone that is up moves to probing. */
  mayClaim(): boolean;
  /**
   * What to do with a claimed job of `account` now: `send` it, send it as its account's `probe` (the pause
   * is up: the first job to come tests the key), or `defer` it (paused, or another job is probing).
   * `probeBy` (`wait-rule.ts`): the job's own last chance; a pause holding it back ends by then, so it
   * (or another job) probes before its deadline.
   */
  admit(account: string | null, probeBy?: EpochMs | null): Admission;
  /** The probe of `account` is no longer under way (whatever its outcome): another job may probe. */
  probeEnded(account: string | null): void;
  /** The scopes paused now and not probing: their jobs are held back unseen by claims. */
  held(): PauseScope[];
  /** A job of `scope` must go by `probeBy` (its last chance): the scope's pause ends by then. */
  shorten(scope: PauseScope, probeBy: EpochMs): void;
  /** The Dispatcher stopped: a probe of everyone's pause begins again at the next claim. */
  stopped(): void;
  /** Accounts whose jobs claims leave out now: paused, or probing with the probe under way. */
  excluded(): (string | null)[];
  /** `paused` or `probing` while all delivery is paused, else null. */
  globalState(): 'paused' | 'probing' | null;
  /** The pause of all delivery: when it is up and why (its reason and cause), or nulls. */
  readonly global: { until: EpochMs | null; reason: string | null; cause: PauseCause | null };
  /** The accounts paused now, oldest pause first. */
  accounts(): AccountPause[];
  /** Pauses begun since the Dispatcher was created (one per outage): of all delivery, of one account. */
  readonly begun: { pauses: number; accountPauses: number };
}

const keyOf = (scope: PauseScope): string | symbol =>
  scope === ALL_ACCOUNTS ? ALL_ACCOUNTS : accountKey(scope);

/** The cause that holds an entry longest. */
function longest(entry: Entry): Hold {
  let out: Hold | undefined;
  for (const hold of entry.causes.values()) if (out === undefined || hold.until > out.until) out = hold;
  return out as Hold;
}

/** Creates the table, nothing paused. */
export function createPauses(ctx: PausesContext): PauseTable {
  const entries = new Map<string | symbol, Entry>();
  const begun = { pauses: 0, accountPauses: 0 };

  const end = (entry: Entry) => {
    entries.delete(keyOf(entry.scope));
    const pausedForMs = ctx.now() - entry.since;
    if (entry.scope === ALL_ACCOUNTS) ctx.emit('resumed', { pausedForMs });
    else ctx.emit('account-resumed', { account: entry.scope, pausedForMs });
  };

  /** A held-back job is due at the end of the pause, or now while a probe is under way (claims leave it out). */
  const dueAgain = (entry: Entry): EpochMs => {
    const at = ctx.now();
    return entry.probing ? at : Math.max(at, longest(entry).until);
  };

  return {
    begun,

    pause(scope, cause, failure, forMs = ctx.authPauseMs, endBy = null) {
      const at = ctx.now();
      const until = endBy === null ? at + forMs : Math.min(at + forMs, endBy);
      const hold = { cause, reason: failure.reason, status: failure.status, until };
      const existing = entries.get(keyOf(scope));
      if (existing !== undefined) {
        // Still the same outage: one alert per outage.
        existing.causes.set(cause, hold);
        existing.probing = false;
        return dueAgain(existing);
      }
      const entry: Entry = { scope, since: at, causes: new Map([[cause, hold]]), probing: false };
      entries.set(keyOf(scope), entry);
      const { status, reason } = hold;
      if (scope === ALL_ACCOUNTS) {
        begun.pauses += 1;
        ctx.emit('paused', { status, reason, until, cause });
      } else {
        begun.accountPauses += 1;
        ctx.emit('account-paused', { account: scope, status, reason, until, cause });
      }
      return dueAgain(entry);
    },

    answered(account) {
      const all = entries.get(ALL_ACCOUNTS);
      // Only the probe proves the key again: its answer is the first to a request sent after the pause began.
      if (all?.probing === true) end(all);
      const entry = entries.get(accountKey(account));
      if (entry !== undefined) end(entry);
    },

    mayClaim() {
      const all = entries.get(ALL_ACCOUNTS);
      if (all === undefined || all.probing) return true;
      if (ctx.now() < longest(all).until) return false;
      all.probing = true;
      return true;
    },

    admit(account, probeBy = null) {
      // A pause never outlives the last chance of a job it holds back.
      if (probeBy !== null) {
        for (const entry of [entries.get(ALL_ACCOUNTS), entries.get(accountKey(account))])
          for (const hold of entry?.causes.values() ?? []) hold.until = Math.min(hold.until, probeBy);
      }
      // Claimed before all delivery paused: given back untried instead of sent into the outage.
      const all = entries.get(ALL_ACCOUNTS);
      if (all !== undefined && !all.probing) {
        return { verdict: 'defer', until: dueAgain(all), reason: 'delivery paused' };
      }
      const entry = entries.get(accountKey(account));
      if (entry === undefined) return { verdict: 'send' };
      if (entry.probing || ctx.now() < longest(entry).until) {
        return { verdict: 'defer', until: dueAgain(entry), reason: 'delivery paused for this account' };
      }
      entry.probing = true;
      return { verdict: 'probe' };
    },

    held() {
      const at = ctx.now();
      const out: PauseScope[] = [];
      for (const entry of entries.values())
        if (!entry.probing && at < longest(entry).until) out.push(entry.scope);
      return out;
    },

    shorten(scope, probeBy) {
      for (const hold of entries.get(keyOf(scope))?.causes.values() ?? [])
        hold.until = Math.min(hold.until, probeBy);
    },

    probeEnded(account) {
      const entry = entries.get(accountKey(account));
      if (entry !== undefined) entry.probing = false;
    },

    stopped() {
      const all = entries.get(ALL_ACCOUNTS);
      if (all !== undefined) all.probing = false;
    },

    excluded() {
      const at = ctx.now();
      const out: (string | null)[] = [];
      for (const entry of entries.values()) {
        if (entry.scope === ALL_ACCOUNTS) continue;
        if (entry.probing || at < longest(entry).until) out.push(entry.scope);
      }
      return out;
    },

    globalState() {
      const all = entries.get(ALL_ACCOUNTS);
      if (all === undefined) return null;
      return all.probing ? 'probing' : 'paused';
    },

    get global() {
      const all = entries.get(ALL_ACCOUNTS);
      if (all === undefined) return { until: null, reason: null, cause: null };
      const { until, reason, cause } = longest(all);
      return { until, reason, cause };
    },

    accounts() {
      const out: AccountPause[] = [];
      for (const entry of entries.values()) {
        if (entry.scope === ALL_ACCOUNTS) continue;
        const { until, reason, status, cause } = longest(entry);
        out.push({ account: entry.scope, since: entry.since, until, reason, status, cause });
      }
      return out.sort((a, b) => a.since - b.since);
    },
  };
}

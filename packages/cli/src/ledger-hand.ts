/**
 * Who moved the money, for the ledger: the actor of a CLI command (`--as NAME`, else `$USER`, else the
 * system's user name) and a small writer that appends one row per operator action when the backend keeps a
 * ledger (`features.ledger`; not on SQS).
 */
import { userInfo } from 'node:os';
import type { Job, Outbox } from '@postback/core';
import { jobLedgerRow, type LedgerKind } from '@postback/core/store';

/**
 * The actor a CLI command writes in the ledger: `--as NAME`, else `$USER`, else the system's user name,
 * else `unknown`.
 *
 * @example
 * ```ts
 * cliActor(values.as, io.env); // "ana"
 * ```
 */
export function cliActor(
  given: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  if (given !== undefined && given.trim() !== '') return given;
  if (env.USER !== undefined && env.USER !== '') return env.USER;
  try {
    return userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Appends a ledger row for each job an operator action touched. */
export interface LedgerHand {
  /** Records `kind` done to `job` at `at`, with an optional reason. A no-op where the store keeps no ledger. */
  record(kind: LedgerKind, job: Job, at: number, reason?: string): Promise<void>;
}

/**
 * A {@link LedgerHand} writing as `actor` on `outbox`.
 *
 * @example
 * ```ts
 * await ledgerHand(outbox, 'ana').record('replay', job, Date.now());
 * ```
 */
export function ledgerHand(outbox: Outbox, actor: string): LedgerHand {
  return {
    async record(kind, job, at, reason) {
      if (!outbox.features.ledger) return;
      await outbox.appendLedger(jobLedgerRow(job, { actor, kind, at, reason: reason ?? null }));
    },
  };
}

/**
 * The dashboard's money-moving actions (replay, purge) with their ledger rows: each job the action moved
 * gets one row naming the token's holder (`tokenName`), where the store keeps a ledger.
 */
import type { Job, Outbox } from '@postback/core';
import { jobLedgerRow } from '@postback/core/store';

async function deadOf(outbox: Outbox, ids: readonly string[]): Promise<Job[]> {
  const jobs = await Promise.all([...new Set(ids)].map((id) => outbox.get(id)));
  return jobs.filter((job): job is Job => job?.state === 'dead');
}

async function record(outbox: Outbox, actor: string, kind: 'replay' | 'purge', job: Job, at: number) {
  if (!outbox.features.ledger) return;
  await outbox.appendLedger(jobLedgerRow(job, { actor, kind, at, reason: `dashboard ${kind}` }));
}

/**
 * Replays the dead jobs among `ids` and writes a `replay` row for each one put back to pending.
 *
 * @example
 * ```ts
 * const replayed = await replayWithLedger(outbox, ids, Date.now(), 'ana');
 * ```
 */
export async function replayWithLedger(outbox: Outbox, ids: readonly string[], at: number, actor: string) {
  const replayed = await outbox.replay({ ids }, at);
  if (replayed > 0 && outbox.features.ledger) {
    for (const id of new Set(ids)) {
      const job = await outbox.get(id);
      if (job !== null && job.state !== 'dead' && job.state !== 'expired' && job.state !== 'cancelled')
        await record(outbox, actor, 'replay', job, at);
    }
  }
  return replayed;
}

/**
 * Purges the dead jobs among `ids` and writes a `purge` row for each one deleted.
 *
 * @example
 * ```ts
 * const purged = await purgeWithLedger(outbox, ids, Date.now(), 'ana');
 * ```
 */
export async function purgeWithLedger(outbox: Outbox, ids: readonly string[], at: number, actor: string) {
  const dead = outbox.features.ledger ? await deadOf(outbox, ids) : [];
  const purged = await outbox.purgeDead({ ids });
  for (const job of dead)
    if ((await outbox.get(job.id)) === null) await record(outbox, actor, 'purge', job, at);
  return purged;
}

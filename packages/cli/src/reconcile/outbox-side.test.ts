/**
 * The outbox side of `reconcile` counts every job state, the ones this version does not know included
 * (issue 22 adds `unmatched`: a reversal the service answered it had nothing to reverse): each is counted
 * under its own name, never dropped, and a reversal the service answered is not flagged.
 */
import { createMemoryOutbox, type Job, type Outbox } from '@postback/core';
import { describe, expect, it } from 'vitest';
import { outboxSide } from './outbox-side.ts';

const TOKEN = 'tok_000000000000000000000001';

/**
 * A real memory outbox whose listing shows the jobs of some orders in a state of a later version, as a
 * store of that version would list them (no store of this version can hold such a state).
 */
function fromLaterVersion(outbox: Outbox, states: Record<string, string>): Outbox {
  return {
    ...outbox,
    listJobs: async (filter) =>
      (await outbox.listJobs(filter)).map((job) => {
        const state = states[`${job.kind} ${job.orderId}`];
        return (state === undefined ? job : { ...job, state }) as Job;
      }),
    history: (id) => outbox.history(id),
  };
}

describe('reconcile: the outbox side', () => {
  it('counts a state it does not know under its own name and flags nothing for it', async () => {
    const outbox = createMemoryOutbox();
    const now = Date.now();
    for (const orderId of ['a', 'b', 'c']) {
      await outbox.confirm({ orderId, valueMicros: 2_000_000, click: { token: TOKEN, clickedAt: now } });
    }
    const later = Date.now() + 1_000;
    for (const job of await outbox.claim({ now: later, limit: 10, leaseMs: 60_000 }))
      await outbox.complete(job, { now: later, campaignId: 'cmp_1' });
    await outbox.refund({ orderId: 'a' });
    const side = await outboxSide(
      fromLaterVersion(outbox, { 'refund a': 'unmatched', 'confirm c': 'parked' }),
      {
        now,
        sinceMs: null,
        returnWindowMs: null,
      },
    );
    const row = side.rows.get(JSON.stringify([null, 'cmp_1']));
    expect(row?.delivered).toEqual({ count: 2, value_micros: 4_000_000 });
    expect(row?.reversals_other).toEqual({ unmatched: { count: 1, value_micros: 2_000_000 } });
    expect(row?.reversal_pending).toEqual({ count: 0, value_micros: 0 });
    expect(side.notSent).toEqual({ parked: { count: 1, value_micros: 2_000_000 } });
    expect(side.flags).toEqual([]);
  });
});

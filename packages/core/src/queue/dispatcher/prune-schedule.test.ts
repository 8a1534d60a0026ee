/**
 * A Dispatcher prunes its own outbox by default (core's retention rules, one place), so a library user who
 * never runs the CLI does not grow the outbox forever; `prune: false` turns it off.
 */
import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../policy.ts';
import { createMemoryOutbox } from '../memory-outbox.ts';
import { createDispatcher } from './dispatcher.ts';
import type { ConversionsClient, DispatcherOptions } from './options.ts';
import { DEFAULT_PRUNE_OLDER_THAN_MS } from './prune-schedule.ts';

/** A client that must not be called: nothing is due in these tests. */
const idleClient: ConversionsClient = {
  conversions: {
    confirm: async () => {
      throw new Error('nothing should be sent');
    },
    refund: async () => {
      throw new Error('nothing should be sent');
    },
  },
} as unknown as ConversionsClient;

async function deliveredLongAgo() {
  let t = Date.UTC(2026, 0, 1);
  const clock = () => t;
  const outbox = createMemoryOutbox({ now: clock });
  const { job } = await outbox.confirm({
    orderId: 'ord_old',
    valueMicros: 1_000_000,
    click: { token: 'tok_old_AbC', clickedAt: t - 1_000 },
  });
  const [claimed] = await outbox.claim({ now: t, limit: 1, leaseMs: 30_000 });
  await outbox.complete(claimed as NonNullable<typeof claimed>, { now: t, campaignId: 'cmp_1' });
  // Past the 30 days and the 400 days a charged confirmation is kept when the store tells no return window.
  t += 401 * DAY_MS;
  return { outbox, id: job.id, clock };
}

async function runBriefly(options: DispatcherOptions) {
  const dispatcher = createDispatcher(options);
  dispatcher.start();
  await new Promise((resolve) => setTimeout(resolve, 50));
  await dispatcher.stop({ timeoutMs: 1_000 });
}

describe("the Dispatcher's own prune", () => {
  it('prunes old final jobs of its outbox at start by default', async () => {
    const { outbox, id, clock } = await deliveredLongAgo();
    await runBriefly({ outbox, client: idleClient, now: clock, pollIntervalMs: 10_000 });
    expect(await outbox.get(id)).toBeNull();
  });

  it('prunes nothing with prune: false', async () => {
    const { outbox, id, clock } = await deliveredLongAgo();
    await runBriefly({ outbox, client: idleClient, now: clock, pollIntervalMs: 10_000, prune: false });
    expect(await outbox.get(id)).not.toBeNull();
  });

  it('keeps a final job younger than olderThanMs', async () => {
    const { outbox, id, clock } = await deliveredLongAgo();
    const olderThanMs = 500 * DAY_MS;
    expect(olderThanMs).toBeGreaterThan(DEFAULT_PRUNE_OLDER_THAN_MS);
    await runBriefly({
      outbox,
      client: idleClient,
      now: clock,
      pollIntervalMs: 10_000,
      prune: { olderThanMs },
    });
    expect(await outbox.get(id)).not.toBeNull();
  });

  it('refuses a bad prune option naming the field', () => {
    const outbox = createMemoryOutbox();
    expect(() => createDispatcher({ outbox, client: idleClient, prune: { everyMs: 0 } })).toThrow(/prune/);
    expect(() => createDispatcher({ outbox, client: idleClient, prune: true as never })).toThrow(/prune/);
  });
});

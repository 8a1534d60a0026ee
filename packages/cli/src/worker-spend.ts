/**
 * The worker's spend readings for `postback held`: when a problem is first held (`held`) and when its
 * campaign is seen accepting s2s (`switch-seen`), the worker reads the account's campaign spend
 * (`GET /v1/campaigns`) and keeps the reading in the outbox, so the list shows the spend at the hold's start
 * and at the switch, what the pixel billed meanwhile. It asks with the account's key: a key without the read
 * scope is refused, which costs nothing and is logged at debug. Never in the way of delivery: one reading at
 * a time, its failures only logged.
 */
import { createClient } from '@postback/client';
import type { Outbox } from '@postback/core';
import type { Logger } from './log.ts';
import { takeSpendReadings } from './shadow/spend.ts';
import type { DispatcherHandle } from './worker-factories.ts';

/** What reading the spend needs. */
export interface WorkerSpendSetup {
  dispatcher: Pick<DispatcherHandle, 'on'>;
  outbox: Pick<Outbox, 'shadow'>;
  baseUrl: string;
  keyFor(account: string | null): string | undefined;
  now(): number;
  logger: Pick<Logger, 'log'>;
}

/** Starts taking readings on the Dispatcher's events; resolves `close` once the last reading is done. */
export function watchSpend(setup: WorkerSpendSetup): { close(): Promise<void> } {
  const shadow = setup.outbox.shadow;
  if (shadow === undefined) return { close: async () => {} };
  const client = createClient({ baseUrl: setup.baseUrl, timeout: 10_000 });
  let last: Promise<void> = Promise.resolve();
  const read = (payload: unknown) => {
    const account = (payload as { account?: string | null }).account ?? null;
    last = last.then(async () => {
      try {
        const { readings, notes } = await takeSpendReadings(
          shadow,
          { client, keyFor: setup.keyFor },
          new Set([account]),
          setup.now,
        );
        setup.logger.log('debug', 'worker.spend-reading', { account, readings: readings.length, notes });
      } catch (error) {
        setup.logger.log('debug', 'worker.spend-reading', { account, error: String(error) });
      }
    });
  };
  setup.dispatcher.on('held', read);
  setup.dispatcher.on('switch-seen', read);
  return {
    async close() {
      await last;
      await client.close();
    },
  };
}

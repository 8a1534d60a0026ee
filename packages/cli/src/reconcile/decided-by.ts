/**
 * The "who decided" column of `postback reconcile`: for each flagged and each listed unattributed order,
 * the actor of its latest ledger row (an operator, a dashboard token's name, or `dispatcher`).
 */
import type { Outbox } from '@postback/core';
import { MAX_LEDGER_READ_LIMIT } from '@postback/core/store';
import type { OutboxSide } from './outbox-side.ts';

/**
 * Fills `decided_by` of the side's flags and listed unattributed orders from the ledger; leaves null where
 * the backend keeps no ledger or the order has no row.
 *
 * @example
 * ```ts
 * await addDecidedBy(outbox, side);
 * ```
 */
export async function addDecidedBy(outbox: Outbox, side: OutboxSide): Promise<void> {
  if (!outbox.features.ledger) return;
  const cache = new Map<string, string | null>();
  const who = async (orderId: string, account: string | null): Promise<string | null> => {
    const key = JSON.stringify([account, orderId]);
    const known = cache.get(key);
    if (known !== undefined) return known;
    const rows = await outbox.readLedger({ orderId, limit: MAX_LEDGER_READ_LIMIT });
    const last = rows.filter((row) => row.account === account).at(-1);
    const actor = last?.actor ?? null;
    cache.set(key, actor);
    return actor;
  };
  for (const flag of side.flags) flag.decided_by = await who(flag.order_id, flag.account);
  for (const order of side.unattributed.orders) order.decided_by = await who(order.order_id, order.account);
}

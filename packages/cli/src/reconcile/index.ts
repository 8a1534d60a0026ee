/**
 * `reconcile()`: the outbox's figures per campaign beside the service's own (see `outbox-side.ts` and
 * `service-side.ts`), and the flags that need a person. `postback reconcile` prints it.
 */

import type { AdServiceClient } from '@postback/client';
import type { Outbox } from '@postback/core';
import { iso } from '../format.ts';
import { addDecidedBy } from './decided-by.ts';
import { type OutboxSideOptions, outboxSide } from './outbox-side.ts';
import { addServiceSide } from './service-side.ts';
import type { ReconcileReport } from './types.ts';

export type { ReconcileFlag, ReconcileReport } from './types.ts';

/** What {@link reconcile} reads from besides the outbox: the service, with a key per account. */
export interface ServiceAccess {
  client: AdServiceClient;
  /** The key of an account (null: jobs without one), or undefined when none is known. */
  keyFor(account: string | null): string | undefined;
}

/**
 * Builds the report: the outbox read whole (orders created since `sinceMs` when given), then the service's
 * campaigns and filtered clicks of every account it has a key for. Campaigns sort by account, then id.
 *
 * @throws {UnreachableError} when the service cannot be reached.
 * @example
 * ```ts
 * const report = await reconcile(outbox, { client, keyFor: () => key }, { now: Date.now(), sinceMs: null, returnWindowMs: null });
 * ```
 */
export async function reconcile(
  outbox: Outbox,
  service: ServiceAccess,
  options: OutboxSideOptions,
): Promise<ReconcileReport> {
  const side = await outboxSide(outbox, options);
  await addDecidedBy(outbox, side);
  const notes = await addServiceSide(side, service.client, service.keyFor);
  const campaigns = [...side.rows.values()].sort(
    (a, b) => (a.account ?? '').localeCompare(b.account ?? '') || a.campaign_id.localeCompare(b.campaign_id),
  );
  return {
    since: options.sinceMs === null ? null : iso(options.now - options.sinceMs),
    return_window_ms: options.returnWindowMs,
    campaigns,
    unattributed: side.unattributed,
    not_sent: side.notSent,
    flags: side.flags,
    notes,
  };
}

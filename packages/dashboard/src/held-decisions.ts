/**
 * The dashboard's decision on one held problem (`POST api/held-send`, `POST api/held-drop`): the store
 * decides its pending held jobs in one transaction (`OutboxSwitches.decide`), then each job decided gets
 * one `held-send` or `held-drop` ledger row naming the token's holder (`tokenName`), where the store
 * keeps a ledger.
 */
import type { Outbox } from '@postback/core';
import { jobLedgerRow, type SwitchDecision } from '@postback/core/store';
import { ClientError } from './answers.ts';
import type { HeldProblemKey } from './held-body.ts';

/** What a decision did, counted: `sent` are due now, `dropped` cancelled, `expired` past their deadline. */
export interface HeldDecided {
  decided: number;
  sent: number;
  dropped: number;
  expired: number;
}

/**
 * Decides the held jobs of `problem` at `at` as `actor`, and writes a ledger row for each one.
 *
 * @throws {ClientError} 409 when the store keeps no switches (`outbox.switches` undefined: SQS).
 * @example
 * ```ts
 * await decideHeld(outbox, { account: 'shop-a', campaignId: 'cmp_1' }, 'drop', Date.now(), 'ana');
 * // { decided: 2, sent: 0, dropped: 2, expired: 0 }
 * ```
 */
export async function decideHeld(
  outbox: Outbox,
  problem: HeldProblemKey,
  decision: SwitchDecision,
  at: number,
  actor: string,
): Promise<HeldDecided> {
  const switches = outbox.switches;
  if (switches === undefined) {
    throw new ClientError(
      409,
      "this store keeps no switches of held campaigns, so the dashboard cannot decide: use the Dispatcher's onSwitch option",
    );
  }
  const decided = await switches.decide({ ...problem, decision, now: at });
  if (outbox.features.ledger) {
    for (const { decision: done, job } of decided) {
      const kind = done === 'send' ? 'held-send' : 'held-drop';
      const reason = `dashboard ${kind}: ${job.lastError ?? job.state}`;
      await outbox.appendLedger(jobLedgerRow(job, { actor, kind, at, reason }));
    }
  }
  const count = (state: string) => decided.filter((d) => d.job.state === state).length;
  return {
    decided: decided.length,
    sent: count('pending'),
    dropped: count('cancelled'),
    expired: count('expired'),
  };
}

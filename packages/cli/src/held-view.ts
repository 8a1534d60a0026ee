/**
 * Held problems as the operator commands show them (`postback status`, `postback held`): each problem of
 * the outbox's stats with the switch of its campaign when one was seen (then it awaits a decision), and
 * the campaign's spend from the readings kept in the outbox (what the pixel billed meanwhile).
 */
import type { HeldProblem } from '@postback/core';
import type { SpendReading, SwitchSeen } from '@postback/core/store';
import { iso } from './format.ts';

/** A held problem with the switch of its campaign, when one was seen. */
export interface HeldWithSwitch extends HeldProblem {
  /** When a delivery showed the campaign accepting s2s (null: not seen): its orders await a decision. */
  switchSeenAt: number | null;
}

/** The problems of `held` with the switches seen for them. */
export function withSwitches(
  held: readonly HeldProblem[],
  switches: readonly SwitchSeen[],
): HeldWithSwitch[] {
  return held.map((problem) => ({
    ...problem,
    switchSeenAt:
      switches.find((s) => s.account === problem.account && s.campaignId === problem.campaignId)?.at ?? null,
  }));
}

/** The problems whose switch was seen: their orders await a decision. */
export const awaitingDecision = (held: readonly HeldWithSwitch[]) =>
  held.filter((problem) => problem.switchSeenAt !== null);

/** A held problem in JSON: times as ISO 8601, and whether it awaits a decision. */
export function heldJson(problem: HeldWithSwitch) {
  return {
    ...problem,
    since: iso(problem.since),
    earliestDeadline: iso(problem.earliestDeadline),
    switchSeenAt: iso(problem.switchSeenAt),
    awaitingDecision: problem.switchSeenAt !== null,
  };
}

/** One spend figure of a campaign: when it was read and what it was (micros). */
export interface SpendAt {
  at: number;
  spendMicros: number;
}

/**
 * The campaign's spend in the reading of `account` nearest `at` (the latest at or before it, else the
 * first after), or null when no reading lists the campaign.
 */
export function spendNear(
  readings: readonly SpendReading[],
  problem: Pick<HeldProblem, 'account' | 'campaignId'>,
  at: number,
): SpendAt | null {
  const figures: SpendAt[] = [];
  for (const reading of readings) {
    if (reading.account !== problem.account) continue;
    const campaign = reading.campaigns.find((c) => c.campaignId === problem.campaignId);
    if (campaign !== undefined) figures.push({ at: reading.at, spendMicros: campaign.spendMicros });
  }
  figures.sort((a, b) => a.at - b.at);
  return figures.filter((f) => f.at <= at).at(-1) ?? figures.find((f) => f.at > at) ?? null;
}

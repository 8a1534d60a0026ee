/**
 * The jobs this outbox handed out by `claim` whose outcome it has not been given yet (`complete`, `retry`,
 * `fail`, `release`), by the claim that took them: a completion waits a little (`outcome-batch.ts`) for
 * those of the other jobs of its claim, and the batch is written as soon as the last of them has its
 * outcome. A job nobody settles (another worker took it, its caller gave up) holds its claim's batch no
 * longer than the wait, and is forgotten when its lease ends.
 */

/** The jobs of one claim still out, and when their leases end (one claim, one lease). */
interface ClaimGroup {
  ids: Set<string>;
  leaseEnds: number;
}

/** The jobs out; see {@link createClaimedJobs}. */
export interface ClaimedJobs {
  /** The jobs one claim handed out, their leases ending at `leaseEnds`. */
  claimed(ids: readonly string[], leaseEnds: number): void;
  /**
   * The job's outcome was given at `now` (whether or not it is recorded): it is no longer out. Returns
   * whether other jobs of its claim are still out (false for a job this outbox did not claim).
   */
  settled(id: string, now: number): boolean;
}

/**
 * Creates the set, empty.
 *
 * @example
 * ```ts
 * const out = createClaimedJobs();
 * out.claimed(['7', '8'], Date.now() + 30_000);
 * out.settled('7', Date.now()); // true: 8 is still out
 * out.settled('8', Date.now()); // false
 * ```
 */
export function createClaimedJobs(): ClaimedJobs {
  const groupOf = new Map<string, ClaimGroup>();
  return {
    claimed(ids, leaseEnds) {
      if (ids.length === 0) return;
      const group: ClaimGroup = { ids: new Set(ids), leaseEnds };
      for (const id of ids) {
        // Taken again (its lease ran out): it belongs to this claim now.
        groupOf.get(id)?.ids.delete(id);
        groupOf.set(id, group);
      }
    },
    settled(id, now) {
      const group = groupOf.get(id);
      if (group === undefined) return false;
      groupOf.delete(id);
      group.ids.delete(id);
      if (group.leaseEnds > now) return group.ids.size > 0;
      // The claim's lease ended: whatever of it nobody settled is forgotten.
      for (const other of group.ids) groupOf.delete(other);
      group.ids.clear();
      return false;
    },
  };
}
